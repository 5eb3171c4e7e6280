// Logs stay JSON under faults: the service as a child process (as `npm start` runs it), its database
// behind a relay the test cuts, its object store a real S3-compatible server. While the database is
// gone, requests fail and the driver retries; every line the process writes on stdout and stderr is
// one JSON object, none carries a connection string or a stack, and the driver's complaints are
// throttled rather than repeated per attempt.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { type ServiceProcess, spawnService } from '../support/process.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const KEY = 'svc_pk_logs_under_faults_0123456789abcdefghijklmn';

describe('Logs under faults (a service process whose database goes away)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let proxy: TcpProxy;
  let s3: TestS3;
  let service: ServiceProcess;
  let dataDir: string;
  let url: string;

  before(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    s3 = await startS3();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-logs-faults-'));
    url = proxy.via(database.url);
    service = await spawnService({
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      SVC_BOOTSTRAP_KEY: KEY,
      LOG_LEVEL: 'info',
      S3_BUCKET: s3.config.bucket,
      S3_ENDPOINT: s3.config.endpoint,
      S3_ACCESS_KEY_ID: s3.config.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.config.secretAccessKey,
    });
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
    await s3?.stop();
    await database?.drop();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('writes only JSON lines, without connection strings or stacks, and throttles the driver', async () => {
    const get = (p: string) => fetch(`${service.restUrl}/api/v1${p}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect((await get('/tests/cases')).status).to.equal(200);
    await proxy.cut();
    for (let i = 0; i < 30; i++) {
      const answer = await get(i % 2 ? '/tests/cases' : '/assets/buckets');
      expect(answer.status).to.equal(503);
      expect(answer.headers.get('retry-after')).to.match(/^\d+$/);
      expect((await answer.json()).error.code).to.equal('database_unavailable');
    }
    expect((await fetch(`${service.restUrl}/readyz`)).status).to.equal(503);
    await proxy.restore();
    expect((await get('/tests/cases')).status).to.equal(200);
    // The database's health finds it back on its next probe (at most a second apart).
    await eventually(async () => expect(service.stderr()).to.include('"database available again"'));
    const exit = await service.stop();
    expect(exit).to.equal(0);

    const lines = (service.stdout() + service.stderr()).split('\n').filter((l) => l.length);
    const records = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
    const everything = lines.join('\n');
    expect(everything).not.to.include(url);
    expect(everything).not.to.include(database.url);
    expect(everything).not.to.match(/postgres(ql)?:\/\//);
    expect(everything).not.to.match(/\\n\s+at /);
    // 30 failed requests and the pool's connects during the outage: one line as it begins, one as it
    // ends (the database's health speaks of it), none per request or per connect.
    const driver = records.filter((r) => r.source === 'knex' && r.level !== 'debug');
    const failed = records.filter((r) => String(r.msg).startsWith('request failed'));
    expect(driver, JSON.stringify(driver)).to.deep.equal([]);
    expect(failed, JSON.stringify(failed)).to.deep.equal([]);
    expect(records.filter((r) => r.msg === 'database unavailable')).to.have.length(1);
    expect(records.filter((r) => r.msg === 'database available again')).to.have.length(1);
  });
});
