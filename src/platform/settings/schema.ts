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

export const ProjectSettingsSchema = registerSchema({
  $id: 'ProjectSettings',
  title: 'ProjectSettings',
  description: "Settings of the calling key's project; a field never set has its default",
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'readiness', 'version'],
  properties: {
    projectId: { type: 'string' },
    readiness,
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
  },
} as const;
export const ProjectSettingsPatchSchema = registerSchema(settingsPatch);
export type ProjectSettingsPatch = BodyOf<typeof settingsPatch>;
