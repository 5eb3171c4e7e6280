// HTML from template literals: every interpolated value is escaped unless it is already Html (made by
// this tag or by raw()). Arrays are joined; null, undefined and false render nothing.
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `value` as HTML text, safe in an element or a quoted attribute. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is trusted as it is (made by this module's callers from constants, never from data). */
export function raw(text: string): Html {
  return new Html(text);
}

/** A duration in a short human form. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** An ISO time as `<time>`, readable in UTC. */
export function time(iso: string | Date | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  const value = typeof iso === 'string' ? iso : iso.toISOString();
  return html`<time datetime="${value}">${value.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="badge s-${status.replace(/[^a-z]/g, '')}">${status}</span>`;
}

/** The time of day of an ISO time, to the millisecond (UTC), as `<time>`: for time lines. */
export function clock(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}" title="${iso}">${iso.slice(11, 23)}</time>`;
}

/** A gap in milliseconds, signed, for time lines. */
export function gap(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '';
  return ms < 1000 ? `+${ms} ms` : `+${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
