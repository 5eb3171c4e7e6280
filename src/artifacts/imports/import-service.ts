// Results imported from another tool's report into a test run (docs/ci.md, "Results from other
// tools"): each test is matched to a test case (an id in its name, else the mapping an earlier import
// kept, else a new draft case), and one result is recorded per test. Everything happens in one
// transaction that stays open while the report streams in: a report that turns out malformed on its
// last line leaves no result, case or mapping behind.
import type { Knex } from 'knex';
import type { Principal } from '../../auth/principal.js';
import { type ChangeEvent, type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { IdPrefix, newId } from '../../ids.js';
import { withDefaults } from '../../rest/resource/definition.js';
import type { ArtifactDefinition, StoredArtifact } from '../kind.js';
import { artifactRecord, checkArtifactQuota } from '../store.js';
import { caseIdIn, externalKey, type ImportedTest } from './imported-test.js';

export type ImportFormat = 'junit' | 'ctrf';

export interface ImportSummary {
  importId: string;
  testRunId: string;
  format: ImportFormat;
  /** Tests read from the report; one result each. */
  tests: number;
  results: { created: number; passed: number; failed: number; error: number; skipped: number };
  matched: { byId: number; byMapping: number; newDraft: number };
  /** The draft test cases this import created (one per test no case was found for). */
  createdTestCaseIds: string[];
}

export interface ImportKinds {
  testCase: ArtifactDefinition;
  testResult: ArtifactDefinition;
}

export class ResultImporter {
  constructor(
    private readonly db: Db,
    private readonly kinds: ImportKinds,
    private readonly limits: { artifacts?: number },
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  /** Refuses an unknown (404) or closed (409) test run before a byte of the report is read. */
  async checkRun(principal: Principal, testRunId: string): Promise<void> {
    await this.openRun(this.db, principal, testRunId);
  }

  private async openRun(db: Knex, principal: Principal, testRunId: string, lock = false): Promise<void> {
    const q = db('artifacts').where({ id: testRunId, project_id: principal.projectId, kind: 'test_run' });
    const run = await (lock ? q.forShare() : q).first('data');
    if (!run) throw errors.notFound('Test run', testRunId);
    if (run.data.status === 'closed')
      throw errors.conflict(`Test run ${testRunId} is closed; reopen it (status open) to import results into it`, {
        testRunId,
      });
  }

  async importReport(
    principal: Principal,
    testRunId: string,
    format: ImportFormat,
    batches: AsyncIterable<ImportedTest[]>,
  ): Promise<ImportSummary> {
    const summary: ImportSummary = {
      importId: newId(IdPrefix.resultImport),
      testRunId,
      format,
      tests: 0,
      results: { created: 0, passed: 0, failed: 0, error: 0, skipped: 0 },
      matched: { byId: 0, byMapping: 0, newDraft: 0 },
      createdTestCaseIds: [],
    };
    // The identities met in this report so far: a test listed twice is one case.
    const known = new Map<string, string>();
    await this.db.transaction(async (trx) => {
      // Held until the import commits: the run cannot be closed half-way through.
      await this.openRun(trx, principal, testRunId, true);
      for await (const tests of batches) {
        if (tests.length) await this.batch(trx, principal, testRunId, tests, summary, known);
      }
      if (!summary.tests) throw errors.validation('The report holds no test');
    });
    return summary;
  }

  private async batch(
    trx: Knex.Transaction,
    principal: Principal,
    testRunId: string,
    tests: ImportedTest[],
    summary: ImportSummary,
    known: Map<string, string>,
  ) {
    const { projectId, tenantId } = principal;
    const { caseOf, drafts } = await matchCases(trx, projectId, tests, summary, known);
    await checkArtifactQuota(trx, principal, this.limits, drafts.length + tests.length);
    const events: ChangeEvent[] = [];
    const report = (types: string[], def: ArtifactDefinition, row: StoredArtifact) => {
      const data = artifactRecord(def, row);
      for (const type of types) events.push({ type, tenantId, projectId, data });
    };
    if (drafts.length) {
      const rows = await this.createDrafts(trx, principal, drafts, summary);
      for (const row of rows) report([`test_case.created`], this.kinds.testCase, row);
    }
    const results = await recordResults(trx, principal, testRunId, tests, caseOf, summary);
    for (const row of results)
      report(['test_result.created', EventType.testResultRecorded], this.kinds.testResult, row);
    await this.events.record(trx, events);
    summary.tests += tests.length;
    summary.results.created += results.length;
    for (const test of tests) summary.results[test.status] += 1;
  }

  /** A draft test case for each test no case was found for, and the mapping that finds it next time. */
  private async createDrafts(
    trx: Knex.Transaction,
    principal: Principal,
    drafts: Draft[],
    summary: ImportSummary,
  ): Promise<StoredArtifact[]> {
    const { projectId, tenantId } = principal;
    const rows: StoredArtifact[] = await trx('artifacts')
      .insert(
        drafts.map(({ key, test, id }) => ({
          id,
          kind: 'test_case',
          tenant_id: tenantId,
          project_id: projectId,
          created_by: principal.keyId,
          data: JSON.stringify(
            withDefaults(this.kinds.testCase, {
              title: test.name.slice(0, 300),
              description: `Imported from a ${summary.format === 'junit' ? 'JUnit' : 'CTRF'} report (${summary.importId}) as ${key}. Add its steps, or keep it as the record of a test run elsewhere.`,
              steps: [],
              status: 'draft',
              labels: ['imported'],
            }),
          ),
        })),
      )
      .returning('*');
    await trx('test_case_mappings')
      .insert(drafts.map(({ key, id }) => ({ project_id: projectId, external_key: key, test_case_id: id })))
      .onConflict(['project_id', 'external_key'])
      .ignore();
    summary.createdTestCaseIds.push(...drafts.map((d) => d.id));
    return rows;
  }
}

/** A test no case was found for: the draft case made for it, under its identity in reports. */
interface Draft {
  key: string;
  test: ImportedTest;
  id: string;
}

/**
 * The case of each test: the case its name holds the id of, else the one an earlier import mapped its
 * identity to, else a new draft (one per identity, however often the report lists it).
 */
async function matchCases(
  trx: Knex.Transaction,
  projectId: string,
  tests: ImportedTest[],
  summary: ImportSummary,
  known: Map<string, string>,
): Promise<{ caseOf: string[]; drafts: Draft[] }> {
  const named = [...new Set(tests.map(caseIdIn).filter((id): id is string => Boolean(id)))];
  const existing = new Set<string>(
    named.length
      ? await trx('artifacts').where({ project_id: projectId, kind: 'test_case' }).whereIn('id', named).pluck('id')
      : [],
  );
  const keys = [...new Set(tests.map(externalKey))].filter((k) => !known.has(k));
  if (keys.length) {
    const rows: Array<{ external_key: string; test_case_id: string }> = await trx('test_case_mappings')
      .where('project_id', projectId)
      .whereIn('external_key', keys)
      .select('external_key', 'test_case_id');
    for (const row of rows) known.set(row.external_key, row.test_case_id);
  }
  const caseOf: string[] = [];
  const drafts: Draft[] = [];
  for (const test of tests) {
    const byId = caseIdIn(test);
    const key = externalKey(test);
    if (byId && existing.has(byId)) {
      summary.matched.byId += 1;
      caseOf.push(byId);
    } else if (known.has(key)) {
      summary.matched.byMapping += 1;
      caseOf.push(known.get(key)!);
    } else {
      const id = newId(IdPrefix.testCase);
      known.set(key, id);
      drafts.push({ key, test, id });
      summary.matched.newDraft += 1;
      caseOf.push(id);
    }
  }
  return { caseOf, drafts };
}

/** One test result per test, in the test run, for the case each was matched to. */
function recordResults(
  trx: Knex.Transaction,
  principal: Principal,
  testRunId: string,
  tests: ImportedTest[],
  caseOf: string[],
  summary: ImportSummary,
): Promise<StoredArtifact[]> {
  const executedAt = new Date().toISOString();
  return trx('artifacts')
    .insert(
      tests.map((test, i) => ({
        id: newId(IdPrefix.testResult),
        kind: 'test_result',
        tenant_id: principal.tenantId,
        project_id: principal.projectId,
        created_by: principal.keyId,
        data: JSON.stringify({
          testRunId,
          testCaseId: caseOf[i],
          status: test.status,
          ...(test.durationMs !== undefined ? { durationMs: test.durationMs } : {}),
          ...(test.message ? { comment: test.message.slice(0, 10_000) } : {}),
          executedAt,
          executedBy: `import:${summary.format}`,
          evidenceAssetIds: [],
          labels: test.flaky ? ['flaky'] : [],
          importId: summary.importId,
        }),
      })),
    )
    .returning('*');
}
