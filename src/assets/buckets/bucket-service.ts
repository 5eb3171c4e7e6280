// Buckets of a project: the three system buckets (made on first use) and the project's own.
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { type Page, paginate } from '../../rest/pagination.js';
import { assetErrors } from '../errors.js';
import type { StorageDrivers } from '../storage/drivers.js';
import { SYSTEM_BUCKETS, systemBucket } from './system.js';

export interface Owner {
  tenantId: string;
  projectId: string;
}

export interface BucketRow {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  system: boolean;
  driver: string;
  max_file_bytes: number | null;
  allowed_content_types: string[] | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** A bucket with what it holds (counted by the query that read it). */
export type BucketUsageRow = BucketRow & { asset_count: number | string; asset_bytes: number | string };

export function bucketView(row: BucketUsageRow) {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    system: row.system,
    driver: row.driver,
    maxFileBytes: row.max_file_bytes === null ? null : Number(row.max_file_bytes),
    allowedContentTypes: row.allowed_content_types,
    usage: { assets: Number(row.asset_count), bytes: Number(row.asset_bytes) },
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
export type BucketView = ReturnType<typeof bucketView>;

export interface BucketInput {
  name: string;
  driver?: string;
  maxFileBytes?: number | null;
  allowedContentTypes?: string[] | null;
}

/** Does a content type fall under a bucket's list ("image/png", or "image/*")? */
export function contentTypeAllowed(allowed: string[] | null, contentType: string): boolean {
  if (!allowed) return true;
  const family = contentType.split('/')[0];
  return allowed.some((entry) => entry === contentType || entry === `${family}/*`);
}

export class BucketService {
  /** Projects whose system buckets are known to exist (they are never deleted). */
  private readonly ensured = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly drivers: StorageDrivers,
  ) {}

  async ensureSystemBuckets(owner: Owner): Promise<void> {
    if (this.ensured.has(owner.projectId)) return;
    await this.db('asset_buckets')
      .insert(
        SYSTEM_BUCKETS.map((spec) => ({
          id: newId('bkt'),
          tenant_id: owner.tenantId,
          project_id: owner.projectId,
          name: spec.name,
          system: true,
          driver: this.drivers.defaultDriver,
          max_file_bytes: spec.maxFileBytes,
          allowed_content_types: spec.allowedContentTypes ? JSON.stringify(spec.allowedContentTypes) : null,
        })),
      )
      .onConflict(['project_id', 'name'])
      .ignore();
    this.ensured.add(owner.projectId);
  }

  async list(owner: Owner, page: { limit?: number; cursor?: string }): Promise<Page<BucketView>> {
    await this.ensureSystemBuckets(owner);
    const query = this.db('asset_buckets as b')
      .where('b.project_id', owner.projectId)
      .select(
        'b.*',
        this.db.raw('(SELECT count(*) FROM assets a WHERE a.bucket_id = b.id) AS asset_count'),
        this.db.raw('(SELECT coalesce(sum(a.size), 0)::bigint FROM assets a WHERE a.bucket_id = b.id) AS asset_bytes'),
      );
    return paginate(query, page, bucketView, 'b.id');
  }

  /** A bucket of the project by id (`bkt_…`) or by name; another project's bucket is a 404. */
  async find(owner: Owner, ref: string): Promise<BucketRow> {
    await this.ensureSystemBuckets(owner);
    const row = await this.db('asset_buckets')
      .where('project_id', owner.projectId)
      .where(ref.startsWith('bkt_') ? 'id' : 'name', ref)
      .first();
    if (!row) throw errors.notFound('Bucket', ref);
    return row;
  }

  async read(owner: Owner, ref: string): Promise<BucketView> {
    const bucket = await this.find(owner, ref);
    const usage = await this.db('assets')
      .where('bucket_id', bucket.id)
      .first(this.db.raw('count(*) AS asset_count, coalesce(sum(size), 0)::bigint AS asset_bytes'));
    return bucketView({ ...bucket, ...usage });
  }

  private checkDriver(driver: string | undefined): void {
    if (driver !== undefined && !this.drivers.available(driver)) {
      throw errors.validation(`Storage driver "${driver}" is not configured on this service`, [
        {
          field: 'body.driver',
          message: driver === 's3' ? 'set S3_BUCKET (and S3_ENDPOINT, credentials) to enable s3' : 'unknown driver',
        },
      ]);
    }
  }

  async create(owner: Owner, input: BucketInput): Promise<BucketView> {
    await this.ensureSystemBuckets(owner);
    this.checkDriver(input.driver);
    const [row] = await this.db('asset_buckets')
      .insert({
        id: newId('bkt'),
        tenant_id: owner.tenantId,
        project_id: owner.projectId,
        name: input.name,
        system: false,
        driver: input.driver ?? this.drivers.defaultDriver,
        max_file_bytes: input.maxFileBytes ?? null,
        allowed_content_types: input.allowedContentTypes ? JSON.stringify(input.allowedContentTypes) : null,
      })
      .onConflict(['project_id', 'name'])
      .ignore()
      .returning('*');
    if (!row)
      throw errors.conflict(`A bucket named "${input.name}" already exists in this project`, { name: input.name });
    return bucketView({ ...row, asset_count: 0, asset_bytes: 0 });
  }

  /** Changes a bucket's driver or limits, only at a revision If-Match allows (412 otherwise). */
  async update(
    owner: Owner,
    ref: string,
    patch: Omit<Partial<BucketInput>, 'name'>,
    ifMatch: IfMatch,
  ): Promise<BucketView> {
    const bucket = await this.find(owner, ref);
    this.checkDriver(patch.driver);
    const changes: Record<string, unknown> = { updated_at: this.db.fn.now(), version: this.db.raw('version + 1') };
    if (patch.driver !== undefined) changes.driver = patch.driver;
    if (patch.maxFileBytes !== undefined) changes.max_file_bytes = patch.maxFileBytes;
    if (patch.allowedContentTypes !== undefined) {
      changes.allowed_content_types = patch.allowedContentTypes ? JSON.stringify(patch.allowedContentTypes) : null;
    }
    await this.db.transaction(async (trx) => {
      const current = await trx('asset_buckets').where('id', bucket.id).forUpdate().first('version');
      if (!current) throw errors.notFound('Bucket', ref);
      checkIfMatch(ifMatch, current.version, `Bucket ${ref}`);
      await trx('asset_buckets').where('id', bucket.id).update(changes);
    });
    return this.read(owner, bucket.id);
  }

  /** Deletes an empty bucket of the project's own (at a revision If-Match allows); system buckets stay. */
  async delete(owner: Owner, ref: string, ifMatch: IfMatch): Promise<void> {
    const bucket = await this.find(owner, ref);
    if (bucket.system || systemBucket(bucket.name)) throw assetErrors.systemBucket(bucket.name, 'it cannot be deleted');
    await this.db.transaction(async (trx) => {
      const current = await trx('asset_buckets').where('id', bucket.id).forUpdate().first('version');
      if (!current) throw errors.notFound('Bucket', ref);
      checkIfMatch(ifMatch, current.version, `Bucket ${ref}`);
      const used = await trx('assets').where('bucket_id', bucket.id).first('id');
      if (used)
        throw errors.conflict(`Bucket "${bucket.name}" still holds assets; delete them first`, { bucket: bucket.name });
      await trx('asset_buckets').where('id', bucket.id).delete();
    });
  }
}
