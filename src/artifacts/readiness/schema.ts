// The answer of GET /releases/{id}/readiness, the MCP tool svc_release_readiness and the data of the
// release.readiness_changed webhook: one schema for the three.
import type { FromSchema } from 'json-schema-to-ts';
import { registerSchema } from '../../rest/schemas.js';

const RULE_IDS = [
  'requirements_covered',
  'requirements_passing',
  'pass_rate',
  'open_bugs',
  'flaky_cases',
  'new_failures',
  'suspect_coverage',
] as const;

const record = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'title', 'reason'],
  properties: {
    id: { type: 'string', description: 'The record behind the rule (a requirement, test case or bug)' },
    kind: { type: 'string' },
    title: { type: ['string', 'null'] },
    reason: {
      enum: [
        'no_coverage',
        'last_failed',
        'never_ran',
        'not_passed',
        'open_bug',
        'flaky',
        'quarantined',
        'new_failure',
        'suspect',
      ],
    },
    status: { type: 'string', description: "Its status: the result's, or the bug's" },
    severity: { type: 'string' },
    testCaseId: { type: 'string' },
    requirementId: { type: 'string' },
    resultId: { type: 'string', description: 'The result that decided it' },
    linkId: {
      type: 'string',
      description: 'The covers link (suspect): confirm it with POST /requirements/{id}/links/{linkId}/confirm',
    },
  },
} as const;

const releaseReadiness = {
  $id: 'ReleaseReadiness',
  title: 'ReleaseReadiness',
  description:
    'Whether a release may ship: a verdict and every rule behind it, each passed, failed or undefined (no data yet), with the records behind it (docs/releases.md)',
  type: 'object',
  additionalProperties: false,
  required: [
    'releaseId',
    'releaseName',
    'verdict',
    'previousVerdict',
    'computedAt',
    'previousComputedAt',
    'thresholds',
    'scope',
    'rules',
  ],
  properties: {
    releaseId: { type: 'string' },
    releaseName: { type: 'string' },
    verdict: {
      enum: ['ready', 'at_risk', 'blocked'],
      description:
        'blocked: a failed rule blocks; at_risk: a failed rule puts it at risk, or nothing has a result yet; ready: neither',
    },
    previousVerdict: {
      enum: ['ready', 'at_risk', 'blocked', null],
      description: 'The verdict the release had before this one (null: it never had another)',
    },
    computedAt: { type: 'string', format: 'date-time' },
    previousComputedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the previous readiness (the one new failures are counted against) was computed',
    },
    thresholds: {
      type: 'object',
      additionalProperties: false,
      required: ['minPassRate', 'blockingPassRate', 'blockingBugSeverities', 'atRiskBugSeverities', 'maxFlakyCases'],
      description: "The project's thresholds it was judged with (GET /platform/settings)",
      properties: {
        minPassRate: { type: 'number' },
        blockingPassRate: { type: 'number' },
        blockingBugSeverities: { type: 'array', items: { type: 'string' } },
        atRiskBugSeverities: { type: 'array', items: { type: 'string' } },
        maxFlakyCases: { type: 'integer' },
      },
    },
    scope: {
      type: 'object',
      additionalProperties: false,
      required: ['requirementIds', 'testPlanIds', 'testRunIds', 'testCases'],
      properties: {
        requirementIds: {
          type: 'array',
          items: { type: 'string' },
          description: 'Requirements planned for the release',
        },
        testPlanIds: {
          type: 'array',
          items: { type: 'string' },
          description: 'Test plans whose releaseId is the release',
        },
        testRunIds: {
          type: 'array',
          items: { type: 'string' },
          description: 'Test runs whose releaseId is the release, or planned_for it',
        },
        testCases: { type: 'integer', minimum: 0, description: 'Cases of those plans and runs' },
      },
    },
    rules: {
      type: 'array',
      description: 'Every rule, always, in this order',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title', 'status', 'effect', 'summary', 'records'],
        properties: {
          id: { enum: RULE_IDS },
          title: { type: 'string' },
          status: { enum: ['passed', 'failed', 'undefined'] },
          effect: { enum: ['blocks', 'risks', 'none'], description: 'What the rule does to the verdict' },
          summary: { type: 'string' },
          measured: { type: ['number', 'null'] },
          threshold: { type: ['number', 'null'] },
          records: { type: 'array', items: record },
        },
      },
    },
  },
} as const;

/** A release's readiness as GET /releases/{id}/readiness answers it (the console reads it as this type). */
export type ReleaseReadinessView = FromSchema<typeof releaseReadiness>;

export const ReadinessSchema = registerSchema(releaseReadiness);
