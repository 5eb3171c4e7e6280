import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startService } from './service.js';

const config = loadConfig();
const log = createLogger(config.logLevel);

try {
  const service = await startService(config, log);
  log.info('service ready', { rest: `${service.restUrl}/api/v1`, otp: `${service.wsUrl}/otp`, instanceId: service.instanceId });
  if (service.bootstrap.minted) {
    // Printed once, on the start that created it; also kept (mode 0600) in the file named.
    process.stdout.write(
      `\nAdmin API key (shown once, also written to ${service.bootstrap.file}):\n  ${service.bootstrap.minted}\n\n`,
    );
  }
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('shutting down', { signal });
      service.stop().then(
        () => process.exit(0),
        (err) => {
          log.error('shutdown failed', { err });
          process.exit(1);
        },
      );
    });
  }
} catch (err) {
  log.error('could not start', { err });
  process.exit(1);
}
