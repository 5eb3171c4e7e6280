// A person's browser, reduced to plain HTTP: cookies kept per origin, redirects followed by hand, the
// consent form posted as a browser posts it. And the PKCE pieces an OAuth client computes.
import { createHash, randomBytes } from 'node:crypto';

export class Browser {
  private readonly cookies = new Map<string, string>();

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string): Promise<Response> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: this.header() } });
    this.remember(res);
    return res;
  }

  async post(url: string, form: Record<string, string>): Promise<Response> {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    this.remember(res);
    return res;
  }

  /** Follows redirects on this service until one leaves it (the client's redirect_uri) or a page answers. */
  async follow(res: Response, base: string): Promise<Response | URL> {
    let current = res;
    for (let i = 0; i < 10 && current.status >= 300 && current.status < 400; i++) {
      const next = new URL(current.headers.get('location')!, base);
      if (next.origin !== new URL(base).origin) return next;
      current = await this.get(next.href);
    }
    return current;
  }
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function claimsOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
}

export function headerOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString());
}

export async function form(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export function basic(id: string, secret: string): Record<string, string> {
  return {
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
  };
}
