// The metrics listener: GET /metrics (Prometheus text format), /healthz and /readyz, on a port of
// its own (METRICS_PORT, on METRICS_HOST, 127.0.0.1 unless set). Metrics describe the whole process,
// every tenant at once, so they are kept off the public REST listener instead of behind a tenant's
// key (docs/operations.md).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import type { Health } from '../rest/health.js';
import type { ServiceMetrics } from './metrics.js';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function listenForMetrics(
  metrics: ServiceMetrics,
  health: Health,
  options: { host: string; port: number; log: Logger },
): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'GET only\n');
    if (path === '/metrics') {
      metrics.text().then(
        (text) => send(200, metrics.contentType, text),
        (err) => {
          options.log.error('metrics collection failed', { err });
          send(500, 'text/plain', 'metrics collection failed\n');
        },
      );
    } else if (path === '/healthz') {
      send(200, 'application/json', '{"status":"ok"}');
    } else if (path === '/readyz') {
      void health
        .ready()
        .then((r) =>
          send(
            r.ready ? 200 : 503,
            'application/json',
            JSON.stringify({ status: r.ready ? 'ready' : 'not ready', checks: r.checks }),
          ),
        );
    } else {
      send(404, 'text/plain', 'GET /metrics, /healthz or /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  return {
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
