// Assets: streamed uploads under limits and quota, reads, signed and public downloads, and deletion
// through the `_deletion` archive.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { type Page, paginate } from '../../rest/pagination.js';
import { type BucketRow, type BucketService, contentTypeAllowed, type Owner } from '../buckets/bucket-service.js';
import { DELETION_BUCKET } from '../buckets/system.js';
import { assetErrors } from '../errors.js';
import { StorageQuota } from '../quota.js';
import { contentDisposition } from '../storage/content-disposition.js';
import { storageKey } from '../storage/driver.js';
import type { StorageDrivers } from '../storage/drivers.js';
import type { FormSpec } from '../upload/form.js';
import { LimitExceeded } from '../upload/meter.js';
import { MULTIPART_OVERHEAD_BYTES, receiveUpload } from '../upload/receive.js';
import { type AssetRow, type AssetView, assetView } from './view.js';

export interface UploadRequest {
  req: IncomingMessage;
  /** The request's Content-Length, when it declared one. */
  contentLength?: number;
}

export interface UploadPlan {
  bucket: BucketRow;
  form: FormSpec;
  /**
   * Checks the form's fields once it is read, inside the transaction that writes the row; answers
   * the row's remaining columns. Throwing here removes the stored file.
   */
  complete(fields: Record<string, unknown>, trx: Db): Promise<Partial<AssetRow>>;
}

export class AssetService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly buckets: BucketService,
    private readonly drivers: StorageDrivers,
    private readonly quota: StorageQuota,
    private readonly log: Logger,
    /** Told, in this process, as soon as a run's evidence files have changed (the view of the run with them). */
    private readonly evidenceChanged: (runId: string) => void = () => {},
  ) {}

  private rows() {
    return this.db('assets as a')
      .join('asset_buckets as b', 'b.id', 'a.bucket_id')
      .select('a.*', 'b.name as bucket_name');
  }

  async findRow(owner: Owner, id: string): Promise<AssetRow> {
    const row = await this.rows().where({ 'a.id': id, 'a.project_id': owner.projectId }).first();
    if (!row) throw errors.notFound('Asset', id);
    return row;
  }

  async read(owner: Owner, id: string): Promise<AssetView> {
    return assetView(await this.findRow(owner, id));
  }

  async list(owner: Owner, bucketRef: string, page: { limit?: number; cursor?: string }): Promise<Page<AssetView>> {
    const bucket = await this.buckets.find(owner, bucketRef);
    return paginate(this.rows().where('a.bucket_id', bucket.id), page, assetView, 'a.id');
  }

  /** Makes an asset public or private, at a revision If-Match allows (412 otherwise). */
  async setVisibility(
    owner: Owner,
    id: string,
    visibility: 'private' | 'public',
    ifMatch: IfMatch,
  ): Promise<AssetView> {
    const row = await this.findRow(owner, id);
    if (row.bucket_name === DELETION_BUCKET && visibility === 'public') {
      throw assetErrors.systemBucket(DELETION_BUCKET, 'archived copies stay private');
    }
    const updated = await this.db.transaction(async (trx) => {
      const current = await trx('assets').where({ id, project_id: owner.projectId }).forUpdate().first('version');
      if (!current) throw errors.notFound('Asset', id);
      checkIfMatch(ifMatch, current.version, `Asset ${id}`);
      const [changed] = await trx('assets')
        .where('id', id)
        .update({ visibility, version: trx.raw('version + 1') })
        .returning('*');
      return changed as AssetRow;
    });
    return assetView({ ...updated, bucket_name: row.bucket_name });
  }

  async usage(owner: Owner) {
    const state = await this.quota.state(owner);
    return { ...state, freeBytes: StorageQuota.remaining(state), maxUploadBytes: this.config.storage.maxUploadBytes };
  }

  /** Bytes of assets a project keeps (copies in _deletion aside), as the quota counts them. */
  usedBytes(projectId: string): Promise<number> {
    return this.quota.usedBytes(projectId);
  }

  /**
   * Streams the upload into the bucket's driver and writes its row. Limits are checked before the
   * body is read (by Content-Length), while it streams (by bytes seen) and, for the quota, once more
   * under the project's lock; any refusal removes what was stored.
   */
  async upload(principal: Principal, request: UploadRequest, plan: UploadPlan): Promise<AssetView> {
    const { bucket } = plan;
    const serviceLimit = this.config.storage.maxUploadBytes;
    const bucketLimit = bucket.max_file_bytes === null ? Infinity : Number(bucket.max_file_bytes);
    const sizeLimit = Math.min(serviceLimit, bucketLimit);
    const tooLarge = () =>
      assetErrors.tooLarge(
        sizeLimit,
        bucketLimit < serviceLimit ? `the limit of bucket "${bucket.name}"` : "the service's upload limit",
      );
    const quota = await this.quota.state(principal);
    const free = StorageQuota.remaining(quota);
    const { contentLength } = request;
    if (contentLength !== undefined) {
      // A body this long holds a file this long, give or take the form's few small parts.
      if (contentLength > sizeLimit + MULTIPART_OVERHEAD_BYTES) throw tooLarge();
      if (contentLength > free + MULTIPART_OVERHEAD_BYTES)
        throw assetErrors.quotaExceeded({ ...quota, uploadBytes: contentLength });
    }

    const id = newId('ast');
    const key = storageKey(principal.tenantId, principal.projectId, id);
    const driver = this.drivers.get(bucket.driver);
    let received;
    try {
      received = await receiveUpload(request.req, {
        limitBytes: Math.min(sizeLimit, free),
        fieldNames: plan.form.fieldNames,
        accept: (file) => {
          if (!contentTypeAllowed(bucket.allowed_content_types, file.contentType)) {
            throw assetErrors.unsupportedType(file.contentType, bucket.allowed_content_types ?? [], bucket.name);
          }
        },
        store: (body, file) =>
          driver.put(key, body, {
            contentType: file.contentType,
            contentDisposition: contentDisposition(file.filename, file.contentType),
          }),
        discard: () => driver.delete(key),
      });
    } catch (err) {
      if (err instanceof LimitExceeded) throw sizeLimit <= free ? tooLarge() : assetErrors.quotaExceeded(quota);
      throw err;
    }

    try {
      const fields = plan.form.parse(received.fields);
      const row = await this.quota.withinQuota(principal, received.file.size, async (trx) => {
        // Holds the bucket against a concurrent delete until the row is in.
        const stillThere = await trx('asset_buckets').where('id', bucket.id).forShare().first('id');
        if (!stillThere) throw errors.notFound('Bucket', bucket.id);
        const extra = await plan.complete(fields, trx);
        const [inserted] = await trx('assets')
          .insert({
            id,
            tenant_id: principal.tenantId,
            project_id: principal.projectId,
            bucket_id: bucket.id,
            name: received.file.filename,
            size: received.file.size,
            content_type: received.file.contentType,
            sha256: received.file.sha256,
            visibility: 'private',
            storage_provider: driver.provider,
            storage_key: key,
            created_by: principal.keyId,
            ...extra,
          })
          .returning('*');
        return inserted as AssetRow;
      });
      if (row.run_id) this.evidenceChanged(row.run_id);
      return assetView({ ...row, bucket_name: bucket.name });
    } catch (err) {
      await driver.delete(key).catch((e) => this.log.error('could not remove a refused upload', { key, err: e }));
      throw err;
    }
  }

  /**
   * Deletes an asset: first a copy goes to the project's `_deletion` bucket, recording who deleted
   * it, when, and where it was; then the asset goes. Deleting a copy in `_deletion` removes it for good.
   */
  async delete(principal: Principal, id: string, ifMatch: IfMatch) {
    const asset = await this.findRow(principal, id);
    // Checked first so a stale delete copies nothing, and again under the row's lock below.
    checkIfMatch(ifMatch, asset.version, `Asset ${id}`);
    const driver = this.drivers.get(asset.storage_provider);
    const removeRow = async (trx: Db) => {
      const current = await trx('assets').where({ id, project_id: principal.projectId }).forUpdate().first('version');
      if (!current) throw errors.notFound('Asset', id);
      checkIfMatch(ifMatch, current.version, `Asset ${id}`);
      await trx('assets').where('id', id).delete();
    };
    if (asset.bucket_name === DELETION_BUCKET) {
      await this.db.transaction(removeRow);
      if (asset.run_id) this.evidenceChanged(asset.run_id);
      await driver.delete(asset.storage_key);
      return { id, deleted: true, archive: null };
    }
    const deletion = await this.buckets.find(principal, DELETION_BUCKET);
    const archiveId = newId('ast');
    const archiveKey = storageKey(principal.tenantId, principal.projectId, archiveId);
    // The copy stays with the driver of the original; its row says so.
    await driver.copy(asset.storage_key, archiveKey);
    let archive: AssetRow;
    try {
      archive = await this.db.transaction(async (trx) => {
        await removeRow(trx);
        const [row] = await trx('assets')
          .insert({
            id: archiveId,
            tenant_id: asset.tenant_id,
            project_id: asset.project_id,
            bucket_id: deletion.id,
            name: asset.name,
            size: asset.size,
            content_type: asset.content_type,
            sha256: asset.sha256,
            visibility: 'private',
            storage_provider: asset.storage_provider,
            storage_key: archiveKey,
            created_by: principal.keyId,
            archive: JSON.stringify({
              assetId: asset.id,
              bucketId: asset.bucket_id,
              bucket: asset.bucket_name,
              visibility: asset.visibility,
              createdAt: asset.created_at.toISOString(),
              createdBy: asset.created_by,
              ...(asset.run_id
                ? { evidence: { runId: asset.run_id, stepIndex: asset.step_index, kind: asset.evidence_kind } }
                : {}),
              deletedBy: principal.keyId,
              deletedAt: new Date().toISOString(),
            }),
          })
          .returning('*');
        return row;
      });
    } catch (err) {
      await driver
        .delete(archiveKey)
        .catch((e) => this.log.error('could not remove an unused archive copy', { key: archiveKey, err: e }));
      throw err;
    }
    if (asset.run_id) this.evidenceChanged(asset.run_id);
    await driver
      .delete(asset.storage_key)
      .catch((err) => this.log.error('deleted asset left its object behind', { key: asset.storage_key, err }));
    return { id, deleted: true, archive: assetView({ ...archive, bucket_name: DELETION_BUCKET }) };
  }

  /** A link to the asset's bytes that needs no key, valid for the configured time (15 minutes). */
  async signedUrl(owner: Owner, id: string, origin: string): Promise<{ url: string; expiresAt: string }> {
    const row = await this.findRow(owner, id);
    const now = new Date();
    const expiresInSec = this.config.storage.signedUrlTtlSec;
    const url = await this.drivers
      .get(row.storage_provider)
      .signedUrl(
        { assetId: row.id, key: row.storage_key, name: row.name, contentType: row.content_type },
        { origin: this.config.storage.publicUrl ?? origin, expiresInSec, now },
      );
    return { url, expiresAt: new Date(now.getTime() + expiresInSec * 1000).toISOString() };
  }

  /** The asset behind a service-signed link; 403 for a bad or expired signature, before any lookup. */
  async bySignature(id: string, exp: string | undefined, sig: string | undefined): Promise<AssetRow> {
    const check = this.drivers.signer.check(id, exp, sig);
    if (check !== 'valid') throw assetErrors.badSignature(check);
    const row = await this.rows().where('a.id', id).first();
    if (!row) throw errors.notFound('Asset', id);
    return row;
  }

  /** A public asset; anything else (private, archived, missing) is the same 404. */
  async publicAsset(id: string): Promise<AssetRow> {
    const row = await this.rows().where({ 'a.id': id, 'a.visibility': 'public' }).first();
    if (!row) throw errors.notFound('Asset', id);
    return row;
  }

  open(row: AssetRow): Promise<Readable> {
    return this.drivers.get(row.storage_provider).get(row.storage_key);
  }
}
