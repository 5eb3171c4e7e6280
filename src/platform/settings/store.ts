// A project's settings: one row of project_settings, made on the first change; read with the defaults
// under what was stored. Implements the artifacts room's ReadinessThresholdsSource (wired in src/service.ts).
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { DEFAULT_QUEUE, DEFAULT_READINESS, type ProjectSettingsPatch } from './schema.js';

export type ReadinessThresholds = typeof DEFAULT_READINESS;
export type QueueSettings = typeof DEFAULT_QUEUE;

interface Stored {
  readiness?: Partial<ReadinessThresholds>;
  queue?: Partial<QueueSettings>;
}

/** A merge patch of one section: each field given replaces the stored one, null removes it. */
function mergedSection(stored: Record<string, unknown> | undefined, patch: Record<string, unknown> | undefined) {
  const next: Record<string, unknown> = { ...stored };
  for (const [field, value] of Object.entries(patch ?? {})) {
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return next;
}

export class ProjectSettings {
  constructor(private readonly db: Db) {}

  async get(projectId: string) {
    const row = await this.db('project_settings').where('project_id', projectId).first('settings', 'version');
    return view(projectId, row?.settings ?? {}, row?.version ?? 0);
  }

  async readinessThresholds(projectId: string): Promise<ReadinessThresholds> {
    return (await this.get(projectId)).readiness;
  }

  /** The project's queue settings (docs/queues.md), each field its default until changed. */
  async queueSettings(projectId: string): Promise<QueueSettings> {
    return (await this.get(projectId)).queue;
  }

  async update(projectId: string, patch: ProjectSettingsPatch, ifMatch: IfMatch) {
    return this.db.transaction(async (trx) => {
      await trx.raw(
        'INSERT INTO project_settings (project_id, version) VALUES (?, 0) ON CONFLICT (project_id) DO NOTHING',
        [projectId],
      );
      const row = await trx('project_settings').where('project_id', projectId).forUpdate().first('settings', 'version');
      checkIfMatch(ifMatch, row.version, `Settings of project ${projectId}`);
      const stored: Stored = row.settings ?? {};
      const readiness = mergedSection(stored.readiness, patch.readiness);
      const queue = mergedSection(stored.queue, patch.queue);
      const next = { ...stored, readiness, queue };
      const merged = view(projectId, next, row.version + 1).readiness;
      if (merged.blockingPassRate > merged.minPassRate) {
        throw errors.validation('blockingPassRate cannot be above minPassRate', [
          {
            field: 'body.readiness.blockingPassRate',
            message: `${merged.blockingPassRate} is above minPassRate ${merged.minPassRate}`,
          },
        ]);
      }
      await trx('project_settings')
        .where('project_id', projectId)
        .update({ settings: JSON.stringify(next), version: row.version + 1, updated_at: trx.fn.now() });
      return view(projectId, next, row.version + 1);
    });
  }
}

function view(projectId: string, stored: Stored, version: number) {
  const readiness = { ...DEFAULT_READINESS, ...stored.readiness } as ReadinessThresholds;
  return { projectId, readiness, queue: { ...DEFAULT_QUEUE, ...stored.queue } as QueueSettings, version };
}
