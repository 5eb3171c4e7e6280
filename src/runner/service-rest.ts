// The runner's REST calls to the service, with its own key: evidence uploads (POST /otp/evidence)
// and asset downloads for upload steps (GET /assets/items/:id/download, a 302 to a signed link).
export interface DownloadedFile {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

export class ServiceRest {
  constructor(
    private readonly base: () => string | undefined,
    private readonly key: string,
  ) {}

  /** REST root ({base}/api/v1); a base given with /api/v1 already is taken as it is. */
  private root(): string {
    const base = this.base();
    if (!base)
      throw new Error(
        "the service's HTTP address is unknown: pass --api URL (the service did not send welcome.apiUrl)",
      );
    const trimmed = base.replace(/\/+$/, '');
    return trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
  }

  get known(): boolean {
    return Boolean(this.base());
  }

  /** Stores a file as evidence of a step; answers its asset id. */
  async uploadEvidence(
    runId: string,
    stepIndex: number,
    file: { name: string; type: string; data: Buffer },
    kind = 'screenshot',
  ): Promise<string> {
    const form = new FormData();
    // Text fields first: the service reads the form as it streams.
    form.set('runId', runId);
    form.set('stepIndex', String(stepIndex));
    form.set('kind', kind);
    form.set('file', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
    const res = await fetch(`${this.root()}/otp/evidence`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.key}` },
      body: form,
    });
    const body = (await res.json().catch(() => undefined)) as
      | { assetId?: string; error?: { message?: string } }
      | undefined;
    if (res.status !== 201 || !body?.assetId)
      throw new Error(`evidence upload answered ${res.status}: ${body?.error?.message ?? 'no assetId'}`);
    return body.assetId;
  }

  async downloadAsset(assetId: string): Promise<DownloadedFile> {
    const res = await fetch(`${this.root()}/assets/items/${encodeURIComponent(assetId)}/download`, {
      headers: { authorization: `Bearer ${this.key}` },
      redirect: 'follow',
    });
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new Error(`asset ${assetId} could not be downloaded (${res.status}): ${text.slice(0, 300)}`);
    }
    return {
      name: fileName(res.headers.get('content-disposition')) ?? assetId,
      mimeType: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim(),
      buffer: Buffer.from(await res.arrayBuffer()),
    };
  }
}

/** The file name of a Content-Disposition header (RFC 5987 form first). */
export function fileName(header: string | null): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // fall back to the plain form
    }
  }
  return /filename="([^"]*)"/i.exec(header)?.[1];
}
