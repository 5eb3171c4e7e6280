// A start that fails halfway stops what it had started, in the reverse order (src/composition/
// teardown.ts): here the very last step fails (the metrics port is taken), after the database, the
// notices, the engine, the REST and OTP listeners and the background work were all up.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { Teardown } from '../../src/composition/teardown.js';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { startService } from '../../src/service.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY } from '../support/service.js';

/** Whether a TCP port on loopback can be listened on (nothing holds it). */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('startService: a start that fails at a late step', () => {
  let database: TestDatabase;
  let taken: net.Server;
  before(async () => {
    database = await createTestDatabase();
    taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => taken?.close(resolve));
    await database?.drop();
  });

  it('stops every part it had started: listeners released, no connection to the database left, the error thrown', async () => {
    const [port, wsPort] = [await freePort(), await freePort()];
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    const config = loadConfig(process.env, {
      port,
      wsPort,
      host: '127.0.0.1',
      dataDir: await fs.mkdtemp(path.join(os.tmpdir(), 'otp-start-fails-')),
      databaseUrl: database.url,
      bootstrapKey: ADMIN_KEY,
      logLevel: 'info',
      metricsPort: (taken.address() as net.AddressInfo).port,
      metricsHost: '127.0.0.1',
    });
    const failed = await startService(config, log).then(
      () => undefined,
      (err: NodeJS.ErrnoException) => err,
    );
    expect(failed?.code).to.equal('EADDRINUSE');
    // Everything up to the last step had started.
    expect(lines.some((line) => JSON.parse(line).msg === 'OTP transport')).to.equal(true);

    expect(await free(port), 'the REST port').to.equal(true);
    expect(await free(wsPort), 'the OTP port').to.equal(true);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // A closed connection leaves pg_stat_activity as its backend exits, a moment after the client.
      await eventually(async () => {
        const { rows } = await client.query(
          'SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        expect(rows, 'connections of the service still open').to.deep.equal([]);
      });
      // Its heartbeat stopped with it, and its row went: no other process will wait for it.
      const { rows } = await client.query('SELECT id FROM service_instances');
      expect(rows).to.deep.equal([]);
    } finally {
      await client.end();
    }
    expect(lines.filter((line) => JSON.parse(line).level === 'error')).to.deep.equal([]);
  });
});

describe('Teardown', () => {
  it('stops the parts the last added first, goes on past one that fails, and stops them once', async () => {
    const lines: string[] = [];
    const teardown = new Teardown(createLogger('info', (line) => lines.push(line)));
    const stopped: string[] = [];
    teardown.add('database', () => stopped.push('database'));
    teardown.add('engine', async () => {
      stopped.push('engine');
      throw new Error('engine would not stop');
    });
    teardown.add('listener', async () => {
      stopped.push('listener');
    });
    expect(teardown.order).to.deep.equal(['listener', 'engine', 'database']);
    await Promise.all([teardown.run(), teardown.run()]);
    await teardown.run();
    expect(stopped).to.deep.equal(['listener', 'engine', 'database']);
    expect(lines.map((line) => JSON.parse(line))).to.have.length(1);
    expect(JSON.parse(lines[0]!)).to.deep.include({ msg: 'could not stop a part of the service', part: 'engine' });
  });
});
