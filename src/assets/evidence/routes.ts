import { API_PREFIX } from '../../rest/openapi.js';
import type { RouteDef } from '../../rest/route.js';
import { refusingEarly, uploadRequest } from '../upload/request.js';
import type { EvidenceService } from './evidence-service.js';
import { EvidenceUploadSchema, evidenceFormSchema } from './schema.js';

export function evidenceRoutes(evidence: EvidenceService): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/otp/evidence',
      auth: 'write',
      tag: 'otp',
      status: 201,
      operationId: 'uploadOtpEvidence',
      multipart: evidenceFormSchema,
      response: EvidenceUploadSchema,
      errors: [402, 404, 415],
      summary:
        'Upload evidence (multipart: file, runId, stepIndex, kind) for a step of a run; answers its assetId, to send as step.result evidence.screenshotAssetId',
      description: [
        "Stored in the project's otp-evidence bucket; a refused upload keeps nothing.",
        '404: runId is not a run of this project. 400: the run has no such step.',
        "402 QUOTA_EXCEEDED (with upgradeUrl): the project's storage quota would be passed. 413: over MAX_UPLOAD_BYTES.",
        '415: the body is not multipart/form-data.',
      ].join('\n'),
      handler: ({ principal, koa }) =>
        refusingEarly(koa, async () => {
          const stored = await evidence.upload(principal, uploadRequest(koa));
          koa.set('Location', `${API_PREFIX}/assets/items/${stored.assetId}`);
          return stored;
        }),
    },
  ];
}
