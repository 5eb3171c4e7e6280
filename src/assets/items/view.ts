// What the API answers about an asset.
export interface AssetRow {
  id: string;
  tenant_id: string;
  project_id: string;
  bucket_id: string;
  bucket_name: string;
  name: string;
  size: number | string;
  content_type: string;
  sha256: string;
  visibility: 'private' | 'public';
  storage_provider: string;
  storage_key: string;
  created_by: string | null;
  run_id: string | null;
  step_index: number | null;
  evidence_kind: string | null;
  archive: Record<string, unknown> | null;
  version: number;
  created_at: Date;
}

export const downloadPath = (id: string) => `/api/v1/assets/items/${id}/download`;
export const publicPath = (id: string) => `/api/v1/assets/public/${id}`;

export function assetView(row: AssetRow) {
  return {
    id: row.id,
    projectId: row.project_id,
    bucketId: row.bucket_id,
    bucket: row.bucket_name,
    name: row.name,
    size: Number(row.size),
    contentType: row.content_type,
    sha256: row.sha256,
    visibility: row.visibility,
    storageProvider: row.storage_provider,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
    /** Paths on this service: the first answers a signed link, the second serves public assets. */
    downloadUrl: downloadPath(row.id),
    ...(row.visibility === 'public' ? { publicUrl: publicPath(row.id) } : {}),
    ...(row.run_id ? { evidence: { runId: row.run_id, stepIndex: row.step_index, kind: row.evidence_kind } } : {}),
    ...(row.archive ? { archivedFrom: row.archive } : {}),
  };
}
export type AssetView = ReturnType<typeof assetView>;
