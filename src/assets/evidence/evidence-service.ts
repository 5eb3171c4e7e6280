// OTP evidence: files an executor uploads for a step of a run, kept in the project's otp-evidence
// bucket; and the check that a step.result only ever points at evidence of its own run.

import type { StepOutcome } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import type { BucketService } from '../buckets/bucket-service.js';
import { EVIDENCE_BUCKET } from '../buckets/system.js';
import type { AssetService, UploadRequest } from '../items/asset-service.js';
import { downloadPath } from '../items/view.js';
import { formSpec } from '../upload/form.js';
import { type EvidenceFile, evidenceFormSchema } from './schema.js';

export type { EvidenceFile };

/** What evidence needs to know of OTP runs. The OTP store answers it (wired in src/service.ts). */
export interface EvidenceRuns {
  /** The number of steps of a run of the project; undefined when the project has no such run. */
  totalSteps(projectId: string, runId: string): Promise<number | undefined>;
  /** The project a run belongs to; undefined for an unknown run. */
  projectOf(runId: string): Promise<string | undefined>;
}

export class EvidenceService {
  private readonly form = formSpec(evidenceFormSchema);

  constructor(
    private readonly db: Db,
    private readonly buckets: BucketService,
    private readonly assets: AssetService,
    private readonly runs: EvidenceRuns,
  ) {}

  async upload(principal: Principal, request: UploadRequest) {
    const bucket = await this.buckets.find(principal, EVIDENCE_BUCKET);
    const asset = await this.assets.upload(principal, request, {
      bucket,
      form: this.form,
      // A run's steps never change once it is created, so the check needs no part in the upload's transaction.
      complete: async (fields) => {
        const runId = fields.runId as string;
        const stepIndex = fields.stepIndex as number;
        const totalSteps = await this.runs.totalSteps(principal.projectId, runId);
        if (totalSteps === undefined) throw errors.notFound('Run', runId);
        if (stepIndex >= totalSteps) {
          throw errors.validation(`Run ${runId} has ${totalSteps} steps`, [
            { field: 'body.stepIndex', message: `must be below ${totalSteps}` },
          ]);
        }
        return { run_id: runId, step_index: stepIndex, evidence_kind: fields.kind as string };
      },
    });
    return {
      assetId: asset.id,
      runId: asset.evidence!.runId,
      stepIndex: asset.evidence!.stepIndex,
      kind: asset.evidence!.kind,
      size: asset.size,
      sha256: asset.sha256,
    };
  }

  /**
   * Keeps `evidence.screenshotAssetId` only where it names evidence uploaded for this run; any other
   * id (unknown, another run's, another project's, not evidence) is dropped and a note says why.
   */
  async verify(runId: string, outcomes: StepOutcome[]): Promise<StepOutcome[]> {
    const ids = [
      ...new Set(outcomes.flatMap((o) => (o.evidence?.screenshotAssetId ? [o.evidence.screenshotAssetId] : []))),
    ];
    if (!ids.length) return outcomes;
    const projectId = await this.runs.projectOf(runId);
    const known = new Set(
      projectId === undefined
        ? []
        : (
            await this.db('assets as a')
              .join('asset_buckets as b', 'b.id', 'a.bucket_id')
              .where({ 'a.run_id': runId, 'a.project_id': projectId, 'b.name': EVIDENCE_BUCKET })
              .whereIn('a.id', ids)
              .select('a.id')
          ).map((r: { id: string }) => r.id),
    );
    return outcomes.map((outcome) => {
      const id = outcome.evidence?.screenshotAssetId;
      if (!id || known.has(id)) return outcome;
      const { screenshotAssetId: _dropped, ...rest } = outcome.evidence!;
      return {
        ...outcome,
        evidence: {
          ...rest,
          note: `screenshotAssetId ${id} was not recorded: it is not evidence uploaded for this run (POST /api/v1/otp/evidence with runId ${runId})`,
        },
      };
    });
  }
}

/** The evidence files of a run, by step, as GET /otp/runs/:id shows them. */
export async function evidenceByStep(db: Db, runId: string): Promise<Map<number, EvidenceFile[]>> {
  const rows = await db('assets')
    .where('run_id', runId)
    .orderBy('id')
    .select('id', 'step_index', 'evidence_kind', 'name', 'content_type', 'size');
  const byStep = new Map<number, EvidenceFile[]>();
  for (const row of rows) {
    const files = byStep.get(row.step_index) ?? [];
    files.push({
      assetId: row.id,
      kind: row.evidence_kind,
      name: row.name,
      contentType: row.content_type,
      size: Number(row.size),
      downloadUrl: downloadPath(row.id),
    });
    byStep.set(row.step_index, files);
  }
  return byStep;
}
