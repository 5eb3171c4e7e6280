// service_instances: one row per live service process, its heartbeat the proof that it still drives
// the runs and sessions it holds. PostgreSQL is the coordination layer between processes; this table
// is the engine's, so its statements live here with the rest of the engine's SQL.
import type { Db } from '../../db/connect.js';

export class InstanceStore {
  constructor(private readonly db: Db) {}

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

  async remove(id: string): Promise<void> {
    await this.db('service_instances').where('id', id).delete();
  }
}
