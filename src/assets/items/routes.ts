import { API_PREFIX } from '../../rest/openapi.js';
import { type PageQuery, pageQuerySchema } from '../../rest/pagination.js';
import { type RouteDef, route } from '../../rest/route.js';
import type { BucketService } from '../buckets/bucket-service.js';
import { systemBucket } from '../buckets/system.js';
import { assetErrors } from '../errors.js';
import { formSpec } from '../upload/form.js';
import { refusingEarly, uploadRequest } from '../upload/request.js';
import type { AssetService } from './asset-service.js';
import {
  AssetDeletionSchema,
  AssetPageSchema,
  AssetSchema,
  type AssetUpdate,
  AssetUpdateSchema,
  AssetUsageSchema,
  assetUploadFormSchema,
  type SignedLinkQuery,
  signedLinkQuery,
} from './schema.js';
import { serveAsset } from './serve.js';

export function assetRoutes(assets: AssetService, buckets: BucketService): RouteDef[] {
  return [uploadRoute(assets, buckets), ...metadataRoutes(assets), ...contentRoutes(assets)];
}

const tag = 'assets';

function uploadRoute(assets: AssetService, buckets: BucketService): RouteDef {
  const uploadForm = formSpec(assetUploadFormSchema);
  return {
    method: 'post',
    path: '/assets/buckets/:id/assets',
    auth: 'write',
    tag,
    status: 201,
    etag: true,
    operationId: 'uploadAsset',
    multipart: assetUploadFormSchema,
    response: AssetSchema,
    errors: [402, 403, 415],
    summary:
      'Upload a file (multipart, part "file"; optional field visibility=public) into a bucket, by bucket id or name',
    description: [
      'The file streams to storage as it arrives; a refused upload keeps nothing.',
      "402 QUOTA_EXCEEDED (with upgradeUrl): the project's storage quota would be passed.",
      '403: otp-evidence and _deletion take no direct uploads (evidence goes through POST /api/v1/otp/evidence).',
      "413: the file is over the bucket's maxFileBytes or the service's MAX_UPLOAD_BYTES.",
      "415: the body is not multipart/form-data, or the file's type is not among the bucket's allowedContentTypes.",
    ].join('\n'),
    handler: ({ principal, params, koa }) =>
      refusingEarly(koa, async () => {
        const bucket = await buckets.find(principal, params.id);
        const spec = systemBucket(bucket.name);
        if (bucket.system && spec && !spec.directUploads) throw assetErrors.systemBucket(bucket.name, spec.why);
        const asset = await assets.upload(principal, uploadRequest(koa), {
          bucket,
          form: uploadForm,
          complete: async (fields) => ({
            visibility: (fields.visibility as 'private' | 'public' | undefined) ?? 'private',
          }),
        });
        koa.set('Location', `${API_PREFIX}/assets/items/${asset.id}`);
        return asset;
      }),
  };
}

/** An asset's metadata: list, usage, read, change, delete. */
function metadataRoutes(assets: AssetService): RouteDef[] {
  return [
    route<unknown, PageQuery>({
      method: 'get',
      path: '/assets/buckets/:id/assets',
      auth: 'read',
      tag,
      operationId: 'listBucketAssets',
      query: pageQuerySchema,
      response: AssetPageSchema,
      summary: 'Assets of a bucket, oldest first',
      handler: ({ principal, params, query }) => assets.list(principal, params.id, query),
    }),
    {
      method: 'get',
      path: '/assets/usage',
      auth: 'read',
      tag,
      operationId: 'getAssetUsage',
      response: AssetUsageSchema,
      summary: "Storage used by the project, its tier's quota and the upload size limit",
      handler: ({ principal }) => assets.usage(principal),
    },
    {
      method: 'get',
      path: '/assets/items/:id',
      auth: 'read',
      tag,
      etag: true,
      operationId: 'getAsset',
      response: AssetSchema,
      summary: 'Metadata of an asset: bucket, name, size, content type, sha256, visibility, storage provider, creation',
      handler: ({ principal, params }) => assets.read(principal, params.id),
    },
    route<AssetUpdate>({
      method: 'patch',
      path: '/assets/items/:id',
      auth: 'write',
      tag,
      etag: true,
      conditional: true,
      operationId: 'updateAsset',
      body: AssetUpdateSchema,
      response: AssetSchema,
      errors: [403],
      summary: 'Make an asset public or private',
      description:
        'Copies in _deletion stay private: making one public is a 403. If-Match guards against lost updates.',
      handler: ({ principal, params, body, ifMatch }) =>
        assets.setVisibility(principal, params.id, body.visibility, ifMatch),
    }),
    {
      method: 'delete',
      path: '/assets/items/:id',
      auth: 'write',
      tag,
      conditional: true,
      operationId: 'deleteAsset',
      response: AssetDeletionSchema,
      summary: 'Delete an asset; a copy is first archived in the _deletion bucket (deleting from _deletion is final)',
      description:
        'Answers the archived copy (archive), or archive: null when the deleted asset was itself a copy in _deletion.',
      handler: ({ principal, params, ifMatch }) => assets.delete(principal, params.id, ifMatch),
    },
  ];
}

/** An asset's bytes: a signed link to them, behind that link, and a public asset's. */
function contentRoutes(assets: AssetService): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/assets/items/:id/download',
      auth: 'read',
      tag,
      status: 302,
      operationId: 'downloadAsset',
      summary: 'Redirect (302) to a signed link to the bytes, valid 15 minutes and usable without a key',
      description:
        'Location is the signed link (this service for fs assets, the S3 endpoint for s3 ones); X-Link-Expires says until when it works.',
      handler: async ({ principal, params, koa }) => {
        const { url, expiresAt } = await assets.signedUrl(principal, params.id, `${koa.protocol}://${koa.host}`);
        koa.set('Cache-Control', 'no-store');
        koa.set('X-Link-Expires', expiresAt);
        koa.redirect(url);
      },
    },
    route<unknown, SignedLinkQuery>({
      method: 'get',
      path: '/assets/signed/:id',
      auth: 'none',
      tag,
      operationId: 'readSignedAsset',
      responseType: '*/*',
      errors: [403],
      query: signedLinkQuery,
      summary:
        'The bytes behind a signed link (made by /download for fs assets); 403 when the link is altered or expired',
      description:
        'Answers the file with its own Content-Type, Content-Disposition and its SHA-256 as ETag (If-None-Match: 304).',
      handler: async ({ params, query, koa }) => {
        const row = await assets.bySignature(params.id, query.exp, query.sig);
        await serveAsset(koa, row, () => assets.open(row), 'private, no-store');
      },
    }),
    {
      method: 'get',
      path: '/assets/public/:id',
      auth: 'none',
      tag,
      operationId: 'readPublicAsset',
      responseType: '*/*',
      summary: 'The bytes of a public asset, without a key; any other id is a 404',
      description:
        'Answers the file with its own Content-Type, Content-Disposition and its SHA-256 as ETag (If-None-Match: 304).',
      handler: async ({ params, koa }) => {
        const row = await assets.publicAsset(params.id);
        await serveAsset(koa, row, () => assets.open(row), 'public, max-age=300');
      },
    },
  ];
}
