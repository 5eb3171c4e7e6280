import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { spawnService } from '../support/process.js';

const KEY = 'svc_pk_process_test_key_0123456789abcdefghijkl';

async function get(url: string, key: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

describe('the service as a process', function () {
  this.timeout(60_000);

  it('starts with nothing configured (embedded PostgreSQL under DATA_DIR), mints one admin key, and restarts on the same data', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-zero-config-'));
    try {
      const first = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: undefined, SVC_BOOTSTRAP_KEY: undefined });
      const file = path.join(dataDir, 'bootstrap-key');
      const key = (await fs.readFile(file, 'utf8')).trim();
      expect(key).to.match(/^svc_pk_[A-Za-z0-9_-]{32,}$/);
      expect((await fs.stat(file)).mode & 0o777).to.equal(0o600);
      // The key is printed on stdout right after the ready line on stderr.
      await eventually(async () => expect(first.stdout()).to.contain(key));
      const ctx = await get(`${first.restUrl}/api/v1/platform/context`, key);
      expect(ctx.body).to.include({ scope: 'admin', projectId: 'prj_default' });
      expect(await first.stop()).to.equal(0);
      // The embedded server stopped with the service.
      const pidFile = await fs.stat(path.join(dataDir, 'pg', 'postmaster.pid')).then(
        () => true,
        () => false,
      );
      expect(pidFile).to.equal(false);

      const second = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: undefined, SVC_BOOTSTRAP_KEY: undefined });
      expect(second.stdout()).not.to.contain('svc_pk_');
      expect((await get(`${second.restUrl}/api/v1/platform/context`, key)).status).to.equal(200);
      expect(await second.stop()).to.equal(0);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('shuts down cleanly on SIGTERM: sockets closed with 1001, runs in flight finished as error', async () => {
    const database = await createTestDatabase();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-sigterm-'));
    try {
      // No drain period: the run in flight (a step that never answers) ends at once.
      const service = await spawnService({
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SVC_BOOTSTRAP_KEY: KEY,
        OTP_DRAIN_MS: '0',
      });
      const api = `${service.restUrl}/api/v1`;
      const post = async (p: string, body: unknown) =>
        (
          await fetch(`${api}${p}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json();
      const testCase = await post('/tests/cases', {
        title: 'long',
        steps: [
          { otp: { action: 'wait', ms: 60000 } },
          { otp: { action: 'hover', locator: { by: 'css', value: 'a' } } },
        ],
      });
      const executor = await TestExecutor.connect(`${service.wsUrl}/otp`, { key: KEY });
      await executor.hello();
      const run = await post('/otp/runs', { testCaseIds: [testCase.id] });
      await executor.next('step.exec');
      const code = await service.stop('SIGTERM');
      expect(code).to.equal(0);
      expect((await executor.closed).code).to.equal(1001);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT status, reason FROM otp_runs WHERE id = $1', [run.runId]);
        expect(rows[0]).to.deep.equal({ status: 'error', reason: 'service shutting down' });
        const steps = await client.query('SELECT status FROM otp_run_steps WHERE run_id = $1 ORDER BY step_index', [
          run.runId,
        ]);
        expect(steps.rows.map((r) => r.status)).to.deep.equal(['error', 'skip']);
        const sessions = await client.query("SELECT count(*)::int AS open FROM otp_sessions WHERE status = 'open'");
        expect(sessions.rows[0].open).to.equal(0);
        const instances = await client.query('SELECT count(*)::int AS n FROM service_instances');
        expect(instances.rows[0].n).to.equal(0);
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
