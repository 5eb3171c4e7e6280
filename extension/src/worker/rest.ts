// The extension's REST calls to the service, with its token: evidence uploads (POST /otp/evidence),
// asset downloads for upload steps, cancelling a run the user stopped at the debugger bar, and saving
// a recording made in the side panel.

export class ServiceRest {
  constructor(
    private readonly base: () => string | undefined,
    private readonly token: () => string | undefined,
  ) {}

  private root(): string {
    const base = this.base();
    if (!base) throw new Error("the service's address is unknown (serviceUrl)");
    return `${base.replace(/\/+$/, '')}/api/v1`;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token() ?? ''}` };
  }

  /** Stores a PNG (base64) as evidence of a step; answers its asset id. */
  async uploadEvidence(runId: string, stepIndex: number, pngBase64: string): Promise<string> {
    const bytes = Uint8Array.from(atob(pngBase64), (c) => c.charCodeAt(0));
    const form = new FormData();
    // Text fields first: the service reads the form as it streams.
    form.set('runId', runId);
    form.set('stepIndex', String(stepIndex));
    form.set('kind', 'screenshot');
    form.set('file', new Blob([bytes], { type: 'image/png' }), `${runId}-step-${stepIndex}.png`);
    const res = await fetch(`${this.root()}/otp/evidence`, { method: 'POST', headers: this.headers(), body: form });
    const body = (await res.json().catch(() => undefined)) as
      | { assetId?: string; error?: { message?: string } }
      | undefined;
    if (res.status !== 201 || !body?.assetId)
      throw new Error(`evidence upload answered ${res.status}: ${body?.error?.message ?? 'no assetId'}`);
    return body.assetId;
  }

  async downloadAsset(assetId: string): Promise<{ name: string; type: string; base64: string }> {
    const res = await fetch(`${this.root()}/assets/items/${encodeURIComponent(assetId)}/download`, {
      headers: this.headers(),
      redirect: 'follow',
    });
    if (!res.ok)
      throw new Error(`asset ${assetId} could not be downloaded (${res.status}): ${(await res.text()).slice(0, 300)}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return {
      name: fileName(res.headers.get('content-disposition')) ?? assetId,
      type: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim(),
      base64: btoa(binary),
    };
  }

  /** A JSON POST (a finished recording: POST /otp/recordings); answers the body, or throws the service's message. */
  async post(path: string, body: unknown): Promise<unknown> {
    const res = await fetch(`${this.root()}${path}`, {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${answer?.error?.message ?? 'no body'}`);
    return answer;
  }

  /** POST /otp/runs/:id/cancel: the run ends cancelled, as if cancelled from the console. */
  async cancelRun(runId: string): Promise<void> {
    const res = await fetch(`${this.root()}/otp/runs/${encodeURIComponent(runId)}/cancel`, {
      method: 'POST',
      headers: this.headers(),
    });
    if (!res.ok && res.status !== 409) throw new Error(`cancel answered ${res.status}`);
  }
}

function fileName(header: string | null): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // the plain form below
    }
  }
  return /filename="([^"]*)"/i.exec(header)?.[1];
}
