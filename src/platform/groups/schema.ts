// The platform/groups resource: groups of projects within a tenant (a team, a product line), not
// of users. Its schemas come from this definition; projectIds is computed from the projects' groupId.

import type { ResourceDefinition } from '../../rest/resource/definition.js';
import { buildSchemas } from '../../rest/resource/schemas.js';
import { revision, timestamps } from '../../rest/schemas.js';

export const groupDefinition: ResourceDefinition = {
  path: 'platform/groups',
  schemaName: 'ProjectGroup',
  pluralName: 'ProjectGroups',
  label: 'group',
  idPrefix: 'grp',
  description: 'A group of projects of the tenant; projects join it through their groupId',
  fields: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Name of the group, unique in the tenant' },
    description: { type: 'string', maxLength: 5_000, description: 'What the group is' },
  },
  required: ['name'],
  computed: {
    projectIds: { type: 'array', items: { type: 'string' }, readOnly: true, description: 'Projects in the group' },
  },
  system: { tenantId: { type: 'string' }, version: revision, ...timestamps },
  filters: [],
  scopes: { read: 'read', write: 'admin' },
};

export const groupSchemas = buildSchemas(groupDefinition);
