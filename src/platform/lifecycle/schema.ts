// Where a project is in its lifecycle, as platform/lifecycle answers it. Its version is the
// project's revision, so If-Match on an action guards against acting on a stale view.
import { registerSchema, revision } from '../../rest/schemas.js';

export const LifecycleSchema = registerSchema({
  $id: 'ProjectLifecycle',
  title: 'ProjectLifecycle',
  description: 'Where a project is in its lifecycle',
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'status', 'archivedAt', 'deletedAt', 'version'],
  properties: {
    projectId: { type: 'string' },
    status: {
      enum: ['active', 'archived', 'deleted'],
      description: 'active; archived: read-only; deleted: gone, its keys no longer work',
    },
    archivedAt: { type: ['string', 'null'], format: 'date-time' },
    deletedAt: { type: ['string', 'null'], format: 'date-time' },
    version: revision,
  },
});
