// What says the environment failed rather than the product or the test: the page could not be
// reached (connection, DNS, TLS, no first byte), the service lost the executor, or what came back is
// an error page of the serving infrastructure (5xx, 429, a gateway or proxy page), seen by the
// navigation's main-document status (step evidence.navigations) or in the text an assert read.

/** A main-document navigation of a step, as the executor reported it (docs/protocol.md). */
export interface Navigation {
  url: string;
  status?: number;
  statusText?: string;
  error?: string;
}

const UNREACHABLE =
  /net::ERR_|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|getaddrinfo|ETIMEDOUT|could not connect|browser has been closed|Target (page|crashed|closed)|executor (was )?lost|connection (was )?lost|socket hang up|SSL_ERROR|certificate (has expired|is not trusted|verify failed)|TLS handshake|no response: still waiting for the first byte/i;

/** The words of an infrastructure's error page (nginx, HAProxy, Envoy, Cloudflare, AWS ALB, Varnish). */
const ERROR_PAGE =
  /service (temporarily )?unavailable|bad gateway|gateway time-?out|too many requests|internal server error|proxy error|upstream (connect )?error|origin (is )?unreachable|web server is down|backend fetch failed|\b(50[0-4]|429|52[0-4]) (error|service|bad|gateway|too|internal)/i;

const quote = (text: string, max = 160) => `"${text.length > max ? `${text.slice(0, max)}…` : text}"`;

/** Whether a failure's code and message alone say the environment failed (history leaves such runs out). */
export function environmental(code: string, message: string): boolean {
  return code === 'E_NAVIGATION_BLOCKED' || UNREACHABLE.test(message) || ERROR_PAGE.test(message);
}

/** Whether an HTTP status is the serving infrastructure's failure, not the product's answer. */
export const infrastructureStatus = (status: number | undefined) =>
  status !== undefined && (status >= 500 || status === 429);

/** The reason the case's last navigation gives, when it failed or came back as an error page. */
export function navigationFailure(navigations: readonly Navigation[]): string | undefined {
  const last = navigations.at(-1);
  if (!last) return undefined;
  if (last.error) return `the navigation to ${last.url} failed: ${quote(last.error)}`;
  if (infrastructureStatus(last.status))
    return `the page ${last.url} answered HTTP ${last.status}${last.statusText ? ` ${last.statusText}` : ''} (the main document's status)`;
  return undefined;
}

/** The reason the failure's message or the text the page showed gives, when it is unreachable or an error page. */
export function textFailure(message: string, actual: string | null): string | undefined {
  if (UNREACHABLE.test(message))
    return `the message says the page or the browser could not be reached: ${quote(message)}`;
  if (actual && ERROR_PAGE.test(actual))
    return `the page showed an error page of the server or a proxy: ${quote(actual)}`;
  if (ERROR_PAGE.test(message)) return `the message quotes an error page of the server or a proxy: ${quote(message)}`;
  return undefined;
}
