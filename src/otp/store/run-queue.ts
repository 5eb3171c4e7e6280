// The queue's statements beside the claim (docs/queues.md): how a claim is ordered and with which
// policy, and the runs a new run supersedes (cancelInProgress).
import { OtpErrorCode } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import type { QueuePolicy } from '../queue/model.js';
import type { RunFinishes } from './run-finish.js';

/** How claims are ordered: the queue rule with each project's policy, or first come, first served. */
export interface QueueClaims {
  mode: 'fair' | 'fifo';
  /** The project's policy (its settings); the defaults when not given. */
  policy?: (projectId: string) => QueuePolicy | Promise<QueuePolicy>;
}

/** What otp_queue_claim takes of a policy (weights and limits travel with each run). */
export function claimPolicy(policy: QueuePolicy): string {
  const { batchToNormalMs, normalToGateMs, gateCap } = policy;
  return JSON.stringify({ batchToNormalMs, normalToGateMs, gateCap });
}

/** The group's earlier runs a new run supersedes: queued ones end `cancelled` at once, naming it. */
export class RunSupersession {
  constructor(
    private readonly db: Db,
    private readonly finishes: Pick<RunFinishes, 'finishUndriven'>,
  ) {}

  /**
   * Cancels the queued runs of (owner, group) posted before `by`, each marked superseded by it;
   * answers the ids of its running ones when `running` is asked (the caller cancels them in flight).
   */
  async supersede(
    projectId: string,
    queue: { owner: string; group: string },
    by: string,
    running: boolean,
  ): Promise<{ cancelled: string[]; running: string[] }> {
    const reason = `superseded by run ${by}`;
    const cancelled = await this.db.transaction(async (trx) => {
      const rows: Array<{ id: string }> = await trx('otp_runs')
        .where({ project_id: projectId, queue_owner: queue.owner, queue_group: queue.group, status: 'queued' })
        .where('id', '<', by)
        .update({ cancel_requested_at: trx.fn.now(), superseded_by: by })
        .returning('id');
      const ids = rows.map((r) => r.id);
      await this.finishes.finishUndriven(ids, { status: 'cancelled', code: OtpErrorCode.cancelled, reason }, trx);
      return ids;
    });
    if (!running) return { cancelled, running: [] };
    const inFlight: Array<{ id: string }> = await this.db('otp_runs')
      .where({ project_id: projectId, queue_owner: queue.owner, queue_group: queue.group, status: 'running' })
      .whereNull('cancel_requested_at')
      .where('id', '<', by)
      .update({ cancel_requested_at: this.db.fn.now(), superseded_by: by })
      .returning('id');
    return { cancelled, running: inFlight.map((r) => r.id) };
  }
}
