import type { Progress } from '../lib/measure.js';
import type { BenchOptions } from '../lib/options.js';
import type { ScenarioResult } from '../lib/report.js';
import type { ServiceUnderTest } from '../lib/service.js';

export interface ScenarioContext {
  options: BenchOptions;
  progress: Progress;
  /** Starts a service under test on a fresh database (extra env for the service, e.g. keepalive). */
  startService(options?: {
    env?: Record<string, string>;
    inspect?: boolean;
    sharedDatabaseUrl?: string;
  }): Promise<ServiceUnderTest>;
}

export interface Scenario {
  name: string;
  title: string;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}
