// A test case run again (POST /otp/runs `retries`): in one transaction, the last outcomes of its
// failed attempt are written, the attempt's outcomes are archived in otp_run_step_attempts, and its
// steps are set back to pending under the new attempt number. Tried again after a database outage,
// it does nothing twice: a case already at the new attempt is left as it is.

import type { CaseRetry } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import type { StepWrite } from './run-rows.js';
import { writeError } from './write-error.js';

export async function retryCase(
  db: Db,
  recordSteps: (writes: StepWrite[], trx: Db) => Promise<void>,
  runId: string,
  writes: StepWrite[],
  retry: CaseRetry,
): Promise<void> {
  try {
    await db.transaction(async (trx) => {
      const done = await trx('otp_run_steps')
        .where({ run_id: runId })
        .whereIn('step_index', retry.stepIndexes)
        .where('attempt', '>=', retry.attempt)
        .first('step_index');
      if (done) return;
      await recordSteps(writes, trx);
      await trx.raw(
        `INSERT INTO otp_run_step_attempts (run_id, step_index, attempt, status, source, duration_ms, error, evidence, actual, used_locator, text_replaced, finished_at)
         SELECT run_id, step_index, attempt, status, source, duration_ms, error, evidence, actual, used_locator, text_replaced, finished_at
           FROM otp_run_steps
          WHERE run_id = ? AND step_index = ANY(?) AND status <> 'pending'
         ON CONFLICT DO NOTHING`,
        [runId, retry.stepIndexes],
      );
      await trx('otp_run_steps').where({ run_id: runId }).whereIn('step_index', retry.stepIndexes).update({
        status: 'pending',
        source: null,
        duration_ms: null,
        error: null,
        evidence: null,
        actual: null,
        used_locator: null,
        text_replaced: null,
        finished_at: null,
        attempt: retry.attempt,
      });
    });
  } catch (err) {
    throw writeError(err);
  }
}
