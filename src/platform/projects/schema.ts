// The platform/projects resource: its definition (and so its schemas) and the create answer, which
// adds the project's first admin key. Projects live in their own table, not in artifacts: their
// system fields are the tenant, the lifecycle status and the revision.

import { ApiKeyWithSecretSchema } from '../../api-keys/schema.js';
import type { ResourceDefinition } from '../../rest/resource/definition.js';
import { buildSchemas } from '../../rest/resource/schemas.js';
import { registerSchema, revision, schemaById, timestamps } from '../../rest/schemas.js';

export const projectDefinition: ResourceDefinition = {
  path: 'platform/projects',
  schemaName: 'Project',
  pluralName: 'Projects',
  label: 'project',
  idPrefix: 'prj',
  description:
    "A project of the tenant: it holds artifacts, OTP runs, assets and API keys. Keys of one project never see another project's data.",
  fields: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Name of the project' },
    description: { type: 'string', maxLength: 5_000, description: 'What the project is' },
    groupId: {
      type: 'string',
      pattern: '^grp_',
      maxLength: 100,
      description: 'The group of projects it belongs to (platform/groups)',
    },
  },
  required: ['name'],
  computed: {
    archivedAt: {
      type: 'string',
      format: 'date-time',
      readOnly: true,
      description: 'When it was archived (absent while active)',
    },
  },
  system: {
    status: {
      enum: ['active', 'archived'],
      readOnly: true,
      description: 'archived: read-only until restored (platform/lifecycle)',
    },
    tenantId: { type: 'string' },
    version: revision,
    ...timestamps,
  },
  filters: ['status', 'groupId'],
  scopes: { read: 'read', write: 'admin' },
};

export const projectSchemas = buildSchemas(projectDefinition);

const projectRecord = schemaById('Project') as { properties: Record<string, unknown>; required: string[] };
export const ProjectCreatedSchema = registerSchema({
  ...projectRecord,
  $id: 'ProjectCreated',
  title: 'ProjectCreated',
  description: 'The new project, with its first admin key (the secret is shown this once)',
  required: [...projectRecord.required, 'adminKey'],
  properties: { ...projectRecord.properties, adminKey: ApiKeyWithSecretSchema },
});
