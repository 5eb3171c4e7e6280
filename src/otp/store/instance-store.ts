// service_instances: one row per live service process, its heartbeat the proof that it still drives
// the runs and sessions it holds. PostgreSQL is the coordination layer between processes; this table
// is the engine's, so its statements live here with the rest of the engine's SQL.
import { OtpErrorCode } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import type { RunStore } from './run-store.js';

export class InstanceStore {
  constructor(
    private readonly db: Db,
    private readonly runs: RunStore,
  ) {}

  async register(instance: { id: string; hostname: string; pid: number }): Promise<void> {
    await this.db('service_instances').insert(instance);
  }

  async heartbeat(id: string): Promise<void> {
    await this.db('service_instances').where('id', id).update({ heartbeat_at: this.db.fn.now() });
  }

  /** Other processes whose last heartbeat is older than `timeoutMs` (by the database's clock). */
  silentPeers(selfId: string, timeoutMs: number): Promise<string[]> {
    return this.db('service_instances')
      .whereNot('id', selfId)
      .where('heartbeat_at', '<', this.db.raw(`now() - (? * interval '1 millisecond')`, [timeoutMs]))
      .pluck('id');
  }

  /** Whether the process heart-beat within `withinMs` (by the database's clock). */
  async beatsWithin(id: string, withinMs: number): Promise<boolean> {
    const row = await this.db('service_instances')
      .where('id', id)
      .where('heartbeat_at', '>=', this.db.raw(`now() - (? * interval '1 millisecond')`, [withinMs]))
      .first('id');
    return row !== undefined;
  }

  /** How many other processes heart-beat within `timeoutMs`: those that could take work over. */
  async livePeerCount(selfId: string, timeoutMs: number): Promise<number> {
    const [row] = await this.db('service_instances')
      .whereNot('id', selfId)
      .where('heartbeat_at', '>=', this.db.raw(`now() - (? * interval '1 millisecond')`, [timeoutMs]))
      .count<Array<{ count: string }>>({ count: '*' });
    return Number(row?.count ?? 0);
  }

  /**
   * Runs `running` for longer than `minAgeMs` that no live process may drive: held by a process whose
   * row is gone (or by none), or by `selfId` (the caller then checks that it still drives them). A
   * process whose row is there but silent is left to the sweep (release), which ends its runs,
   * sessions and row in one transaction. With the process that holds each.
   */
  async undrivenRuns(selfId: string, minAgeMs: number): Promise<Array<{ id: string; instanceId: string | null }>> {
    const { rows } = await this.db.raw(
      `SELECT r.id, r.instance_id FROM otp_runs r
         LEFT JOIN service_instances i ON i.id = r.instance_id
        WHERE r.status = 'running'
          AND coalesce(r.started_at, r.created_at) < now() - (? * interval '1 millisecond')
          AND (i.id IS NULL OR r.instance_id = ?)`,
      [minAgeMs, selfId],
    );
    return (rows as Array<{ id: string; instance_id: string | null }>).map((r) => ({
      id: r.id,
      instanceId: r.instance_id,
    }));
  }

  /**
   * Finishes what a process held and forgets it, in one transaction: its running runs end with the
   * reason (steps it had reported kept, the rest `skip` E_INTERNAL), its open sessions close (1001)
   * with the queued runs pinned to them, and its row goes. Other processes see all of it or none;
   * a sweep cut short leaves the row, so the next sweep does it all again.
   */
  release(instanceId: string, reason: string): Promise<{ runs: number; sessions: number }> {
    return this.db.transaction(async (trx) => {
      const runIds = await this.runs.runningRunIds(instanceId, trx);
      await this.runs.finishUndriven(runIds, { status: 'error', code: OtpErrorCode.internal, reason }, trx);
      const sessionIds = await this.runs.openSessionIds(instanceId, trx);
      for (const id of sessionIds) await this.runs.closeSession(id, 1001, reason, trx);
      await trx('service_instances').where('id', instanceId).delete();
      return { runs: runIds.length, sessions: sessionIds.length };
    });
  }
}
