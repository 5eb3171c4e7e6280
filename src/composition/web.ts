// What people and operators look at: the web console (fed by notices and the engine) and the metrics
// of this process, with their own listener when METRICS_PORT is set.
import type { HistoryAnswers } from '../ai/history-answers.js';
import type { Ai } from '../ai/index.js';
import type { Config } from '../config.js';
import { type Console, createConsole } from '../console/server.js';
import type { DatabaseHealth } from '../db/health.js';
import { consoleDataOf } from '../doors.js';
import type { Logger } from '../log.js';
import { ServiceMetrics } from '../observability/metrics.js';
import { listenForMetrics } from '../observability/server.js';
import type { OtpEngine } from '../otp/engine/engine.js';
import type { RunCommands } from '../otp/runs/commands.js';
import type { RunViews } from '../otp/store/run-views.js';
import type { Health } from '../rest/health.js';
import type { Holdings } from './artifacts.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

/** The metrics of this process; `activeRuns` read when scraped (the engine is built later). */
export function serviceMetrics(health: DatabaseHealth, activeRuns: () => number, teardown: Teardown): ServiceMetrics {
  const metrics = new ServiceMetrics({ activeRuns, database: () => health.stats() });
  teardown.add('metrics', () => metrics.close());
  return metrics;
}

/** The metrics listener (/metrics, /healthz, /readyz), when METRICS_PORT is set; its address. */
export async function listenForMetricsWhenAsked(
  config: Config,
  parts: { metrics: ServiceMetrics; health: Health; log: Logger },
  teardown: Teardown,
): Promise<string | undefined> {
  if (config.metricsPort === undefined) return undefined;
  const { metrics, health, log } = parts;
  const listener = await listenForMetrics(metrics, health, { host: config.metricsHost, port: config.metricsPort, log });
  teardown.add('metrics listener', () => listener.close());
  return listener.url;
}

export interface ConsoleParts {
  engine: OtpEngine;
  runs: RunCommands;
  views: RunViews;
  holdings: Holdings;
  ai: Ai;
  aiHistory: HistoryAnswers;
}

/** The web console: it reads through the same functions and stores as the REST routes (src/console/data.ts). */
export async function webConsole(
  config: Config,
  database: Database,
  parts: ConsoleParts,
  teardown: Teardown,
): Promise<Console> {
  const { holdings, ...rest } = parts;
  const data = consoleDataOf({ ...rest, artifacts: holdings.artifacts, assets: holdings.assets });
  const s3 = config.storage.s3;
  const imageOrigin = s3 && (s3.publicEndpoint ?? s3.endpoint ?? `https://${s3.bucket}.s3.${s3.region}.amazonaws.com`);
  const web = await createConsole({
    data,
    imageOrigins: imageOrigin ? [new URL(imageOrigin).origin] : [],
    extensionZip: config.extensionZip,
  });
  teardown.add('console', () => web.close());
  // The live pages hear of runs, sessions and evidence changed by any process.
  const { notifier } = database;
  notifier.on('run-live', (notice) => web.live.notice(notice));
  notifier.on('session-live', (notice) => web.live.notice(notice));
  notifier.on('run-view', (notice) => web.live.notice(notice));
  return web;
}
