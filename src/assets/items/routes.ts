import type { RouteDef } from '../../rest/route.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import type { BucketService } from '../buckets/bucket-service.js';
import { systemBucket } from '../buckets/system.js';
import { assetErrors } from '../errors.js';
import { formSpec } from '../upload/form.js';
import { refusingEarly, uploadRequest } from '../upload/request.js';
import type { AssetService } from './asset-service.js';
import { assetPatchSchema, assetUploadFormSchema } from './schema.js';
import { serveAsset } from './serve.js';

export function assetRoutes(assets: AssetService, buckets: BucketService): RouteDef[] {
  const tag = 'assets';
  const uploadForm = formSpec(assetUploadFormSchema);
  return [
    {
      method: 'post', path: '/assets/buckets/:id/assets', auth: 'write', tag, status: 201, multipart: assetUploadFormSchema,
      summary: 'Upload a file (multipart, part "file"; optional field visibility=public) into a bucket, by bucket id or name',
      handler: ({ principal, params, koa }) =>
        refusingEarly(koa, async () => {
          const bucket = await buckets.find(principal, params.id);
          const spec = systemBucket(bucket.name);
          if (bucket.system && spec && !spec.directUploads) throw assetErrors.systemBucket(bucket.name, spec.why);
          return assets.upload(principal, uploadRequest(koa), {
            bucket,
            form: uploadForm,
            complete: async (fields) => ({ visibility: (fields.visibility as 'private' | 'public' | undefined) ?? 'private' }),
          });
        }),
    },
    {
      method: 'get', path: '/assets/buckets/:id/assets', auth: 'read', tag,
      query: { type: 'object', properties: pageQueryProperties },
      summary: 'Assets of a bucket, oldest first',
      handler: ({ principal, params, query }) => assets.list(principal, params.id, query),
    },
    {
      method: 'get', path: '/assets/usage', auth: 'read', tag,
      summary: 'Storage used by the project, its tier\'s quota and the upload size limit',
      handler: ({ principal }) => assets.usage(principal),
    },
    {
      method: 'get', path: '/assets/items/:id', auth: 'read', tag,
      summary: 'Metadata of an asset: bucket, name, size, content type, sha256, visibility, storage provider, creation',
      handler: ({ principal, params }) => assets.read(principal, params.id),
    },
    {
      method: 'patch', path: '/assets/items/:id', auth: 'write', tag, body: assetPatchSchema,
      summary: 'Make an asset public or private',
      handler: ({ principal, params, body }) => assets.setVisibility(principal, params.id, body.visibility),
    },
    {
      method: 'delete', path: '/assets/items/:id', auth: 'write', tag,
      summary: 'Delete an asset; a copy is first archived in the _deletion bucket (deleting from _deletion is final)',
      handler: ({ principal, params }) => assets.delete(principal, params.id),
    },
    {
      method: 'get', path: '/assets/items/:id/download', auth: 'read', tag, status: 302,
      summary: 'Redirect (302) to a signed link to the bytes, valid 15 minutes and usable without a key',
      handler: async ({ principal, params, koa }) => {
        const { url, expiresAt } = await assets.signedUrl(principal, params.id, `${koa.protocol}://${koa.host}`);
        koa.set('Cache-Control', 'no-store');
        koa.set('X-Link-Expires', expiresAt);
        koa.redirect(url);
      },
    },
    {
      method: 'get', path: '/assets/signed/:id', auth: 'none', tag,
      query: { type: 'object', properties: { exp: { type: 'string' }, sig: { type: 'string' } } },
      summary: 'The bytes behind a signed link (made by /download for fs assets); 403 when the link is altered or expired',
      handler: async ({ params, query, koa }) => {
        const row = await assets.bySignature(params.id, query.exp, query.sig);
        await serveAsset(koa, row, () => assets.open(row), 'private, no-store');
      },
    },
    {
      method: 'get', path: '/assets/public/:id', auth: 'none', tag,
      summary: 'The bytes of a public asset, without a key; any other id is a 404',
      handler: async ({ params, koa }) => {
        const row = await assets.publicAsset(params.id);
        await serveAsset(koa, row, () => assets.open(row), 'public, max-age=300');
      },
    },
  ];
}
