import type { RouteDef } from '../../rest/route.js';
import { refusingEarly, uploadRequest } from '../upload/request.js';
import type { EvidenceService } from './evidence-service.js';
import { evidenceFormSchema } from './schema.js';

export function evidenceRoutes(evidence: EvidenceService): RouteDef[] {
  return [
    {
      method: 'post', path: '/otp/evidence', auth: 'write', tag: 'otp', status: 201, multipart: evidenceFormSchema,
      summary: 'Upload evidence (multipart: file, runId, stepIndex, kind) for a step of a run; answers its assetId, to send as step.result evidence.screenshotAssetId',
      handler: ({ principal, koa }) => refusingEarly(koa, () => evidence.upload(principal, uploadRequest(koa))),
    },
  ];
}
