// The PostgreSQL limit of the step write on this machine: the service's own group-commit statement
// (RunStore's RECORD_STEPS, the same text and the same jsonb batch) sent alone through `pg` on one
// connection, one statement in flight as the step writer keeps it, each batch of pending rows of
// many runs (as the group commit sees them). Durable step writes per second, and the CPU of the
// backend that ran them.
import pg from 'pg';
import { RECORD_STEPS, preparedQuery, stepRecord } from '../../src/otp/store/run-sql.js';
import { cpuSeconds } from './procs.js';
import type { ServiceUnderTest } from './service.js';

export interface PgStepWrites {
  rate: number;
  batch: number;
  statements: number;
  /** Backend CPU per step written, µs. */
  backendUs: number;
  /** The client's CPU per step written (building the batch, pg's protocol work), µs: this process's, which does nothing else meanwhile. */
  clientUs: number;
  /** Time to durable per statement, ms. */
  p50: number;
  p99: number;
}

/**
 * `service` gives a fresh, migrated database (no executor connected: the service is idle). One run of
 * `stepsPerRun` steps is posted through the API, then copied in SQL until there are enough pending
 * rows for the window; the batches take the rows step by step across runs, as concurrent runs do.
 */
export async function pgStepWrites(
  service: ServiceUnderTest,
  testCaseId: string,
  options: { batch: number; stepsPerRun: number; warmupS: number; durationS: number; expectedRate?: number },
): Promise<PgStepWrites> {
  const { runId } = await service.request<{ runId: string }>('POST', '/otp/runs', { testCaseIds: [testCaseId] });
  const rowsNeeded = (options.expectedRate ?? 40_000) * (options.warmupS + options.durationS);
  const copies = Math.max(options.batch, Math.ceil(rowsNeeded / options.stepsPerRun));
  const { db } = service;
  await db.query(
    `INSERT INTO otp_runs SELECT (jsonb_populate_record(NULL::otp_runs, to_jsonb(r) || jsonb_build_object('id', r.id || '_' || g, 'status', 'running'))).*
       FROM otp_runs r, generate_series(1, $2::int) g WHERE r.id = $1`,
    [runId, copies],
  );
  await db.query(
    `INSERT INTO otp_run_steps SELECT (jsonb_populate_record(NULL::otp_run_steps, to_jsonb(s) || jsonb_build_object('run_id', s.run_id || '_' || g))).*
       FROM otp_run_steps s, generate_series(1, $2::int) g WHERE s.run_id = $1`,
    [runId, copies],
  );
  await db.query('ANALYZE otp_run_steps');
  await db.query('ANALYZE otp_runs');

  const client = new pg.Client({ connectionString: service.dbUrl });
  await client.connect();
  try {
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    // Row k of the sequence: step floor(k / copies) of run copy (k mod copies) + 1.
    let k = 0;
    const nextBatch = () => {
      const writes = [];
      for (let i = 0; i < options.batch; i++, k++) {
        const copy = (k % copies) + 1;
        const stepIndex = Math.floor(k / copies);
        writes.push(stepRecord({ runId: `${runId}_${copy}`, outcome: { stepIndex, status: 'pass', source: 'executor', durationMs: 1 } }));
      }
      return writes;
    };
    const total = copies * options.stepsPerRun;
    const times: number[] = [];
    let rows = 0;
    let cpuBefore = 0;
    const loop = async (seconds: number, measure: boolean) => {
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end && k + options.batch <= total) {
        const writes = nextBatch();
        const sentAt = performance.now();
        const result = await client.query(preparedQuery(RECORD_STEPS, [JSON.stringify(writes), writes.length]));
        if (measure) {
          times.push(performance.now() - sentAt);
          rows += result.rowCount ?? 0;
        }
      }
    };
    await loop(options.warmupS, false);
    cpuBefore = cpuSeconds(backend) ?? NaN;
    const clientBefore = process.cpuUsage();
    const startedAt = performance.now();
    await loop(options.durationS, true);
    const elapsed = performance.now() - startedAt;
    const clientCpu = process.cpuUsage(clientBefore);
    const cpu = (cpuSeconds(backend) ?? NaN) - cpuBefore;
    if (k + options.batch > total) throw new Error(`the PostgreSQL baseline ran out of pending rows (${total}); raise expectedRate`);
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
    return {
      rate: (rows * 1000) / elapsed,
      batch: options.batch,
      statements: times.length,
      backendUs: (cpu * 1e6) / Math.max(1, rows),
      clientUs: (clientCpu.user + clientCpu.system) / Math.max(1, rows),
      p50: at(0.5),
      p99: at(0.99),
    };
  } finally {
    await client.end();
  }
}
