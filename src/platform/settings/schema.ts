// platform/settings: what a project decides for itself. Readiness thresholds first (docs/releases.md);
// every field has its default here, so a project that never changed one reads the same as a new one.

import type { BodyOf } from '../../rest/route.js';
import { registerSchema } from '../../rest/schemas.js';

const SEVERITIES = ['critical', 'major', 'minor', 'trivial'] as const;
const rate = (description: string, value: number) => ({
  type: 'number',
  minimum: 0,
  maximum: 1,
  default: value,
  description,
});
const severities = (description: string, value: string[]) => ({
  type: 'array',
  uniqueItems: true,
  maxItems: 4,
  items: { enum: SEVERITIES },
  default: value,
  description,
});

const readinessProperties = {
  minPassRate: rate('Below this pass rate (passed / cases with a result) the release is at_risk', 0.95),
  blockingPassRate: rate('Below this pass rate the release is blocked', 0.8),
  blockingBugSeverities: severities("An open bug of these severities found by the release's results blocks it", [
    'critical',
  ]),
  atRiskBugSeverities: severities('An open bug of these severities puts it at risk', ['major']),
  maxFlakyCases: {
    type: 'integer',
    minimum: 0,
    maximum: 100_000,
    default: 0,
    description: 'More flaky or quarantined cases than this put it at risk',
  },
} as const;

export const DEFAULT_READINESS = Object.fromEntries(
  Object.entries(readinessProperties).map(([k, v]) => [k, v.default]),
) as {
  minPassRate: number;
  blockingPassRate: number;
  blockingBugSeverities: string[];
  atRiskBugSeverities: string[];
  maxFlakyCases: number;
};

const readiness = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(readinessProperties),
  description: 'Thresholds of release readiness (GET /releases/{id}/readiness)',
  properties: readinessProperties,
};

const weight = { type: 'number', exclusiveMinimum: 0, maximum: 1000 } as const;
const minutes = (description: string, value: number) =>
  ({ type: 'number', minimum: 0, maximum: 10_080, default: value, description }) as const;
const queueScalars = {
  batchToNormalMinutes: minutes('A batch run waiting this long is ranked normal', 10),
  normalToGateMinutes: minutes(
    'A normal run (or a batch run already risen) waiting this much longer is ranked gate',
    30,
  ),
  gateCap: {
    type: 'integer',
    minimum: 0,
    maximum: 1000,
    default: 2,
    description: "A credential's gate runs beyond this many in flight are ranked normal",
  },
} as const;
const queueGroups = {
  type: 'object',
  maxProperties: 1000,
  propertyNames: { minLength: 1, maxLength: 200 },
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      weight: { ...weight, description: "The group's share of its credential's executor time (default 1)" },
      maxInFlight: {
        type: 'integer',
        minimum: 1,
        maximum: 100_000,
        description: 'Runs of the group in flight at most',
      },
    },
  },
  description: 'Per group name: its weight and its limit of runs in flight',
} as const;
const queueOwners = {
  type: 'object',
  maxProperties: 1000,
  propertyNames: { minLength: 1, maxLength: 200 },
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    required: ['weight'],
    properties: {
      weight: { ...weight, description: "The credential's share of the project's executor time (default 1)" },
    },
  },
  description: 'Per credential (API key id or OAuth client id): its weight',
} as const;

export const DEFAULT_QUEUE = {
  ...(Object.fromEntries(Object.entries(queueScalars).map(([k, v]) => [k, v.default])) as {
    batchToNormalMinutes: number;
    normalToGateMinutes: number;
    gateCap: number;
  }),
  groups: {} as Record<string, { weight?: number; maxInFlight?: number }>,
  owners: {} as Record<string, { weight: number }>,
};

const queue = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(queueScalars), 'groups', 'owners'],
  description: 'How the executors are shared between the groups that start runs (docs/queues.md)',
  properties: { ...queueScalars, groups: queueGroups, owners: queueOwners },
};

export const ProjectSettingsSchema = registerSchema({
  $id: 'ProjectSettings',
  title: 'ProjectSettings',
  description: "Settings of the calling key's project; a field never set has its default",
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'readiness', 'queue', 'version'],
  properties: {
    projectId: { type: 'string' },
    readiness,
    queue,
    version: { type: 'integer', minimum: 0, description: 'Revision of the settings (0: never changed)' },
  },
});

const orNull = { type: 'null' } as const;
const settingsPatch = {
  $id: 'ProjectSettingsPatch',
  title: 'ProjectSettingsPatch',
  description: 'A merge patch: the fields given replace the stored ones, null puts one back to its default',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    readiness: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        minPassRate: { anyOf: [{ type: 'number', minimum: 0, maximum: 1 }, orNull] },
        blockingPassRate: { anyOf: [{ type: 'number', minimum: 0, maximum: 1 }, orNull] },
        blockingBugSeverities: {
          anyOf: [{ type: 'array', uniqueItems: true, maxItems: 4, items: { enum: SEVERITIES } }, orNull],
        },
        atRiskBugSeverities: {
          anyOf: [{ type: 'array', uniqueItems: true, maxItems: 4, items: { enum: SEVERITIES } }, orNull],
        },
        maxFlakyCases: { anyOf: [{ type: 'integer', minimum: 0, maximum: 100_000 }, orNull] },
      },
    },
    queue: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      description:
        'Each field given replaces the stored one (groups and owners as a whole); null puts it back to its default',
      properties: {
        batchToNormalMinutes: { anyOf: [{ type: 'number', minimum: 0, maximum: 10_080 }, orNull] },
        normalToGateMinutes: { anyOf: [{ type: 'number', minimum: 0, maximum: 10_080 }, orNull] },
        gateCap: { anyOf: [{ type: 'integer', minimum: 0, maximum: 1000 }, orNull] },
        groups: { anyOf: [queueGroups, orNull] },
        owners: { anyOf: [queueOwners, orNull] },
      },
    },
  },
} as const;
export const ProjectSettingsPatchSchema = registerSchema(settingsPatch);
export type ProjectSettingsPatch = BodyOf<typeof settingsPatch>;
