// The REST calls `otp run` makes, as any client would make them: a bearer credential (an API key, or
// an access token got with OAuth client credentials), JSON in and out, the service's error body read.
import type { RunOptions } from './options.js';

export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

export class ServiceClient {
  private constructor(
    private readonly base: string,
    private readonly bearer: string,
  ) {}

  static async connect(server: string, auth: RunOptions['auth']): Promise<ServiceClient> {
    if ('key' in auth) return new ServiceClient(server, auth.key);
    const res = await fetch(`${server}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read write' }),
    });
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: string;
      error?: string;
      error_description?: string;
    };
    if (!res.ok || !body.access_token)
      throw new ServiceError(
        `the OAuth client was refused: ${body.error_description ?? body.error ?? res.status}`,
        res.status,
      );
    return new ServiceClient(server, body.access_token);
  }

  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const error = (
        parsed as {
          error?: { code?: string; message?: string; details?: { fields?: Array<{ field: string; message: string }> } };
        }
      )?.error;
      const fields = error?.details?.fields?.map((f) => `${f.field}: ${f.message}`).join('; ');
      throw new ServiceError(
        `${error?.message ?? `HTTP ${res.status}`}${fields ? ` (${fields})` : ''}`,
        res.status,
        error?.code,
      );
    }
    return parsed as T;
  }

  /** Every page of a list. */
  async all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await this.request<{ items: T[]; nextCursor: string | null }>(
        'GET',
        `${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return items;
  }
}
