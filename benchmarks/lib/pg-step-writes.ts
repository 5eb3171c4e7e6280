// The PostgreSQL limit of the step write on this machine: the service's own group-commit statement
// (RunStore's RECORD_STEPS, the same text and the same jsonb batch) sent alone through `pg` on one
// connection, one statement in flight as the step writer keeps it, each batch of pending rows of
// many runs (as the group commit sees them). Durable step writes per second, and the CPU of the
// backend that ran them.
import pg from 'pg';
import { preparedQuery, RECORD_STEPS, stepRecord } from '../../src/otp/store/run-sql.js';
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
  /** Times the pending rows ran low and more were copied (outside the measured time). */
  refills: number;
}

/** Headroom over the rate seen so far when pending rows are copied for the time left. */
const HEADROOM = 1.5;

/**
 * Pending step rows to write: copies of one posted run, made in SQL. Each copy is a run of its own
 * (`<runId>_<n>`); the rows are handed out step by step across the copies of one refill, as
 * concurrent runs write them.
 */
class PendingRows {
  private copies = 0;
  /** The copies of the current refill: the first one's number, how many, and rows handed out of them. */
  private segment = { first: 1, count: 0, taken: 0 };

  constructor(
    private readonly db: ServiceUnderTest['db'],
    private readonly runId: string,
    private readonly stepsPerRun: number,
  ) {}

  get left(): number {
    return this.segment.count * this.stepsPerRun - this.segment.taken;
  }

  /** At least `rows` new pending rows (what is left of the current ones is dropped). */
  async refill(rows: number, batch: number): Promise<void> {
    const count = Math.max(batch, Math.ceil(rows / this.stepsPerRun));
    const from = this.copies + 1;
    await this.db.query(
      `INSERT INTO otp_runs SELECT (jsonb_populate_record(NULL::otp_runs, to_jsonb(r) || jsonb_build_object('id', r.id || '_' || g, 'status', 'running'))).*
         FROM otp_runs r, generate_series($2::int, $3::int) g WHERE r.id = $1`,
      [this.runId, from, from + count - 1],
    );
    await this.db.query(
      `INSERT INTO otp_run_steps SELECT (jsonb_populate_record(NULL::otp_run_steps, to_jsonb(s) || jsonb_build_object('run_id', s.run_id || '_' || g))).*
         FROM otp_run_steps s, generate_series($2::int, $3::int) g WHERE s.run_id = $1`,
      [this.runId, from, from + count - 1],
    );
    // Fresh statistics, so that the statement is planned for the table as it now is.
    await this.db.query('ANALYZE otp_run_steps');
    await this.db.query('ANALYZE otp_runs');
    this.copies += count;
    this.segment = { first: from, count, taken: 0 };
  }

  /** The next `batch` rows, as the group commit's batch carries them. */
  take(batch: number): ReturnType<typeof stepRecord>[] {
    const writes = [];
    const { first, count } = this.segment;
    for (let i = 0; i < batch; i++, this.segment.taken++) {
      // Row k of the segment: step floor(k / count) of its copy (k mod count).
      const k = this.segment.taken;
      writes.push(
        stepRecord({
          runId: `${this.runId}_${first + (k % count)}`,
          outcome: { stepIndex: Math.floor(k / count), status: 'pass', source: 'executor', durationMs: 1 },
        }),
      );
    }
    return writes;
  }
}

/**
 * `service` gives a fresh, migrated database (no executor connected: the service is idle). One run of
 * `stepsPerRun` steps is posted through the API, then copied in SQL for `expectedRate` writes a
 * second over the warm-up and the window. When a fast machine writes them all before the window is
 * over, more are copied for the time left at the rate seen so far (with headroom); the clock and the
 * client's CPU stop meanwhile, so the figures are those of the writes alone.
 */
export async function pgStepWrites(
  service: ServiceUnderTest,
  testCaseId: string,
  options: { batch: number; stepsPerRun: number; warmupS: number; durationS: number; expectedRate?: number },
): Promise<PgStepWrites> {
  const { batch } = options;
  const { runId } = await service.request<{ runId: string }>('POST', '/otp/runs', { testCaseIds: [testCaseId] });
  const pending = new PendingRows(service.db, runId, options.stepsPerRun);
  await pending.refill((options.expectedRate ?? 40_000) * (options.warmupS + options.durationS), batch);

  const client = new pg.Client({ connectionString: service.dbUrl });
  await client.connect();
  try {
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    const times: number[] = [];
    let refills = 0;
    // The client's CPU spent on refills, left out of the window's.
    let refillCpu = 0;
    // Rows written and the time they took, warm-up included: the rate a refill is sized by.
    const seen = { written: 0, spent: 0 };
    /** Writes for `seconds` of its own time (refills not counted); answers the rows written and that time. */
    const loop = async (seconds: number, measure: boolean) => {
      let spent = 0;
      let written = 0;
      while (spent < seconds * 1000) {
        if (pending.left < batch) {
          const cpu = process.cpuUsage();
          const perMs = seen.written / Math.max(seen.spent, 1);
          await pending.refill(perMs * (seconds * 1000 - spent) * HEADROOM, batch);
          const used = process.cpuUsage(cpu);
          if (measure) refillCpu += used.user + used.system;
          refills++;
        }
        const startedAt = performance.now();
        const writes = pending.take(batch);
        const sentAt = performance.now();
        const result = await client.query(preparedQuery(RECORD_STEPS, [JSON.stringify(writes), writes.length]));
        const doneAt = performance.now();
        const count = result.rowCount ?? 0;
        spent += doneAt - startedAt;
        written += count;
        seen.spent += doneAt - startedAt;
        seen.written += count;
        if (measure) times.push(doneAt - sentAt);
      }
      return { rows: written, spent };
    };
    await loop(options.warmupS, false);
    const cpuBefore = cpuSeconds(backend) ?? NaN;
    const clientBefore = process.cpuUsage();
    const { rows, spent } = await loop(options.durationS, true);
    const clientCpu = process.cpuUsage(clientBefore);
    const cpu = (cpuSeconds(backend) ?? NaN) - cpuBefore;
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
    return {
      rate: (rows * 1000) / spent,
      batch,
      statements: times.length,
      backendUs: (cpu * 1e6) / Math.max(1, rows),
      clientUs: (clientCpu.user + clientCpu.system - refillCpu) / Math.max(1, rows),
      p50: at(0.5),
      p99: at(0.99),
      refills,
    };
  } finally {
    await client.end();
  }
}
