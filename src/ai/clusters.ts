// GET /ai/failures: the failures of a window grouped by signature, newest first. One statement
// aggregates the window's failures (ai_failures_recent / ai_failures_case index), a second fetches
// the newest example of each cluster on the page, a third their bugs.

import { downloadPath } from '../assets/items/view.js';
import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import type { Page } from '../rest/pagination.js';
import type { QueryOf } from '../rest/route.js';
import type { BugLookup, LinkedBug } from './bugs.js';
import type { failuresQuery } from './schemas.js';

export type FailuresQuery = QueryOf<typeof failuresQuery>;

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;

export interface FailureCluster {
  signature: string;
  code: string;
  action: string;
  locator: string;
  message: string;
  status: 'new' | 'recurring';
  firstSeen: string;
  lastSeen: string;
  count: number;
  runs: number;
  cases: number;
  example: {
    runId: string;
    stepIndex: number;
    /** Its place within its test case, 0-based; absent for failures signed before it was kept. */
    position?: number;
    testCaseId: string;
    message: string;
    occurredAt: string;
    screenshotUrl: string | null;
  };
  bugs: LinkedBug[];
}

/** A row of the clusters' query: one signature's counts in the window and its signature's columns. */
interface ClusterRow {
  signature: string;
  count: number;
  runs: number;
  cases: number;
  last_seen: Date;
  last_seen_text: string;
  code: string;
  action: string;
  locator: string;
  message: string;
  first_seen: Date;
}

/** The latest failure of a signature in the window: the cluster's example. */
interface ExampleRow {
  signature: string;
  run_id: string;
  step_index: number;
  position: number | null;
  test_case_id: string;
  message: string;
  screenshot_asset_id: string | null;
  occurred_at: Date;
}

// The cursor holds the last cluster's last_seen as PostgreSQL writes it (microseconds, which a Date would lose).
function decodeCursor(cursor: string): [string, string] {
  try {
    const [at, sig] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof sig === 'string' && typeof at === 'string' && !Number.isNaN(Date.parse(at))) return [at, sig];
  } catch {
    // refused below
  }
  throw errors.validation('Invalid cursor', [
    { field: 'query.cursor', message: 'give the nextCursor of the previous page, with the same filters' },
  ]);
}

const encodeCursor = (lastSeen: string, signature: string) =>
  Buffer.from(JSON.stringify([lastSeen, signature])).toString('base64url');

export function windowOf(query: { since?: string; until?: string }, now = new Date()): { since: Date; until: Date } {
  const until = query.until ? new Date(query.until) : now;
  const since = query.since ? new Date(query.since) : new Date(until.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (since >= until)
    throw errors.validation('The window is empty', [{ field: 'query.since', message: 'must be before until' }]);
  return { since, until };
}

export async function listClusters(
  db: Db,
  bugs: BugLookup,
  principal: Principal,
  query: FailuresQuery,
): Promise<Page<FailureCluster>> {
  const { since, until } = windowOf(query);
  const limit = query.limit ?? 50;
  const filters: string[] = [];
  const { projectId } = principal;
  const args: Array<string | Date> = [projectId, since, until];
  if (query.testCaseId) {
    filters.push('AND f.test_case_id = ?');
    args.push(query.testCaseId);
  }
  if (query.planId) {
    filters.push('AND f.plan_id = ?');
    args.push(query.planId);
  }
  const outer: string[] = [];
  const outerArgs: Array<string | Date> = [projectId];
  if (query.status === 'new') {
    outer.push('AND s.first_seen >= ?');
    outerArgs.push(since);
  }
  if (query.status === 'recurring') {
    outer.push('AND s.first_seen < ?');
    outerArgs.push(since);
  }
  if (query.cursor) {
    const [at, sig] = decodeCursor(query.cursor);
    outer.push('AND (w.last_seen, w.signature) < (?::timestamptz, ?)');
    outerArgs.push(at, sig);
  }
  const { rows }: { rows: ClusterRow[] } = await db.raw(
    `WITH w AS (
       SELECT f.signature, count(*)::int AS count, count(DISTINCT f.run_id)::int AS runs, count(DISTINCT f.test_case_id)::int AS cases,
              max(f.occurred_at) AS last_seen
         FROM ai_failures f
        WHERE f.project_id = ? AND f.occurred_at >= ? AND f.occurred_at < ? ${filters.join(' ')}
        GROUP BY f.signature)
     SELECT w.*, w.last_seen::text AS last_seen_text, s.code, s.action, s.locator, s.message, s.first_seen
       FROM w JOIN ai_failure_signatures s ON s.project_id = ? AND s.signature = w.signature
      WHERE true ${outer.join(' ')}
      ORDER BY w.last_seen DESC, w.signature DESC
      LIMIT ?`,
    [...args, ...outerArgs, limit + 1] as never,
  );
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  if (page.length === 0) return { items: [], nextCursor: null };
  const signatures = page.map((r) => r.signature);
  const { rows: examples }: { rows: ExampleRow[] } = await db.raw(
    `SELECT x.* FROM unnest(?::text[]) AS sig(signature)
       CROSS JOIN LATERAL (
         SELECT f.signature, f.run_id, f.step_index, f.position, f.test_case_id, f.message, f.screenshot_asset_id, f.occurred_at
           FROM ai_failures f
          WHERE f.project_id = ? AND f.signature = sig.signature AND f.occurred_at >= ? AND f.occurred_at < ? ${filters.join(' ')}
          ORDER BY f.occurred_at DESC, f.run_id DESC LIMIT 1) x`,
    [signatures, ...args] as never,
  );
  const exampleOf = new Map(examples.map((e) => [e.signature, e]));
  const bugsOf = await bugs.bugsOf(principal, signatures);
  const items = page.map((r): FailureCluster => {
    const e = exampleOf.get(r.signature)!;
    return {
      signature: r.signature,
      code: r.code,
      action: r.action,
      locator: r.locator,
      message: r.message,
      status: r.first_seen >= since ? 'new' : 'recurring',
      firstSeen: r.first_seen.toISOString(),
      lastSeen: r.last_seen.toISOString(),
      count: r.count,
      runs: r.runs,
      cases: r.cases,
      example: {
        runId: e.run_id,
        stepIndex: e.step_index,
        ...(e.position === null ? {} : { position: e.position }),
        testCaseId: e.test_case_id,
        message: e.message,
        occurredAt: e.occurred_at.toISOString(),
        screenshotUrl: e.screenshot_asset_id ? downloadPath(e.screenshot_asset_id) : null,
      },
      bugs: bugsOf.get(r.signature) ?? [],
    };
  });
  const last = page[page.length - 1];
  return { items, nextCursor: more ? encodeCursor(last.last_seen_text, last.signature) : null };
}
