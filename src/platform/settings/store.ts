// A project's settings: one row of project_settings, made on the first change; read with the defaults
// under what was stored. Implements the artifacts room's ReadinessThresholdsSource (wired in src/service.ts).
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { DEFAULT_READINESS, type ProjectSettingsPatch } from './schema.js';

export type ReadinessThresholds = typeof DEFAULT_READINESS;

interface Stored {
  readiness?: Partial<ReadinessThresholds>;
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

  async update(projectId: string, patch: ProjectSettingsPatch, ifMatch: IfMatch) {
    return this.db.transaction(async (trx) => {
      await trx.raw(
        'INSERT INTO project_settings (project_id, version) VALUES (?, 0) ON CONFLICT (project_id) DO NOTHING',
        [projectId],
      );
      const row = await trx('project_settings').where('project_id', projectId).forUpdate().first('settings', 'version');
      checkIfMatch(ifMatch, row.version, `Settings of project ${projectId}`);
      const stored: Stored = row.settings ?? {};
      const readiness: Record<string, unknown> = { ...stored.readiness };
      for (const [field, value] of Object.entries(patch.readiness ?? {})) {
        if (value === null) delete readiness[field];
        else readiness[field] = value;
      }
      const next = { ...stored, readiness };
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
  return { projectId, readiness: { ...DEFAULT_READINESS, ...stored.readiness } as ReadinessThresholds, version };
}
