import { loadConfig } from './config.js';
import { createLogger, routeConsole, routeProcessWarnings } from './log.js';
import type { Service } from './service.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
// Before the service's modules load: some libraries print as they do (see log.ts).
routeProcessWarnings(log);
routeConsole(log);
const { startService } = await import('./service.js');

// SIGTERM (a supervisor, `kill`) and SIGINT (Ctrl-C) both drain, then stop everything, the embedded
// PostgreSQL last. A second signal stops waiting for the runs in flight (they end as error). One
// Ctrl-C can arrive twice (from the terminal and again from `npm start`, which forwards it), so a
// repeat within a second counts as the same one. The handlers are in place before the start: a
// signal during it stops the service as soon as it is up (the embedded PostgreSQL, in a process
// group of its own, would otherwise outlive a default exit).
let service: Service | undefined;
let stoppingSince = 0;

function stop(): void {
  service!.stop().then(
    () => {
      log.info('stopped');
      process.exit(0);
    },
    (err) => {
      log.error('shutdown failed', { err });
      process.exit(1);
    },
  );
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stoppingSince) {
      if (Date.now() - stoppingSince < 1_000) return;
      log.info('second signal: not waiting for the runs in flight', { signal });
      return service?.engine.hurryShutdown();
    }
    stoppingSince = Date.now();
    log.info('shutting down', { signal, drainMs: config.drainMs });
    if (service) stop();
  });
}

try {
  service = await startService(config, log);
  log.info('service ready', {
    rest: `${service.restUrl}/api/v1`,
    otp: `${service.wsUrl}/otp`,
    instanceId: service.instanceId,
  });
  if (service.bootstrap.minted) {
    // Printed once, on the start that created it; also kept (mode 0600) in the file named.
    process.stdout.write(
      `\nAdmin API key (shown once, also written to ${service.bootstrap.file}):\n  ${service.bootstrap.minted}\n\n`,
    );
  }
  if (stoppingSince) stop();
} catch (err) {
  log.error('could not start', { err });
  process.exit(1);
}
