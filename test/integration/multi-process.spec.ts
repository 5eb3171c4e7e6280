import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { type Service, startService } from '../../src/service.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

/** Two service processes on one database, as behind a load balancer with no sticky routing. */
describe('several service processes on one database', () => {
  let a: TestService;
  let b: Service;
  const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };

  before(async () => {
    a = await startTestService({ heartbeatMs: 200, instanceTimeoutMs: 1000 });
    b = await startService(
      loadConfig(process.env, {
        port: 0,
        wsPort: 0,
        host: '127.0.0.1',
        dataDir: a.service.config.dataDir,
        databaseUrl: a.database.url,
        bootstrapKey: a.adminKey,
        heartbeatMs: 200,
        instanceTimeoutMs: 1000,
      }),
      createLogger('silent'),
    );
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('runs a run created through one process on an executor connected to the other, and cancels it from the first', async () => {
    const { key } = await a.newProject('admin');
    const id = (await a.request('POST', '/tests/cases', { key, body: { title: 'x', steps: [click, click] } })).body.id;
    const executor = await TestExecutor.connect(`${b.wsUrl}/otp`, { key });
    await executor.hello();
    const created = await a.request('POST', '/otp/runs', { key, body: { testCaseIds: [id] } });
    const exec = await executor.next('step.exec');
    expect(exec.runId).to.equal(created.body.runId);
    executor.result(exec, 'pass');
    await executor.next('step.exec');
    const cancelled = await a.request('POST', `/otp/runs/${created.body.runId}/cancel`, { key });
    expect(cancelled.body.status).to.equal('cancelled');
    expect((await executor.next('run.finished')).payload.status).to.equal('cancelled');
    executor.close();
  });

  it('closes a socket held by the other process when its key is revoked', async () => {
    const created = await a.request('POST', '/api-keys', { body: { scope: 'write', name: 'elsewhere' } });
    const executor = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: created.body.key });
    await executor.hello();
    await a.request('DELETE', `/api-keys/${created.body.id}`);
    expect((await executor.closed).code).to.equal(4401);
  });

  it('finishes the runs of a process that stopped heart-beating as error, keeping reported steps', async () => {
    const db = a.service.db;
    const project = await db('projects').first('id', 'tenant_id');
    // The process, its session, its run and its steps appear together: a sweep (every 200 ms, in
    // both processes) between two of these inserts would release the process before its run existed.
    await db.transaction(async (trx) => {
      await trx('service_instances').insert({
        id: 'ins_gone',
        hostname: 'gone',
        pid: 1,
        heartbeat_at: trx.raw("now() - interval '1 hour'"),
      });
      await trx('otp_sessions').insert({
        id: 'ots_gone',
        tenant_id: project.tenant_id,
        project_id: project.id,
        key_id: 'key_x',
        instance_id: 'ins_gone',
        executor: 'runner',
        capabilities: '{}',
        max_parallel: 1,
      });
      await trx('otp_runs').insert({
        id: 'otr_gone',
        tenant_id: project.tenant_id,
        project_id: project.id,
        session_id: 'ots_gone',
        instance_id: 'ins_gone',
        status: 'running',
        test_cases: JSON.stringify([{ id: 'tc_x', title: 'x', steps: 2 }]),
        total_steps: 2,
        started_at: trx.fn.now(),
      });
      await trx('otp_run_steps').insert([
        {
          run_id: 'otr_gone',
          step_index: 0,
          case_index: 0,
          test_case_id: 'tc_x',
          action: JSON.stringify(click.otp),
          timeout_ms: 1000,
          continue_on_fail: false,
          status: 'pass',
          source: 'executor',
          actual: 'reported',
        },
        {
          run_id: 'otr_gone',
          step_index: 1,
          case_index: 0,
          test_case_id: 'tc_x',
          action: JSON.stringify(click.otp),
          timeout_ms: 1000,
          continue_on_fail: false,
        },
      ]);
    });
    const run = await eventually(async () => {
      const r = await a.request('GET', '/otp/runs/otr_gone');
      expect(r.body.status).to.equal('error');
      return r.body;
    });
    expect(run.steps[0]).to.deep.include({ status: 'pass', actual: 'reported' });
    expect(run.steps[1].status).to.equal('skip');
    expect(run.steps[1].error.code).to.equal('E_INTERNAL');
    expect(run.counts).to.deep.equal({ passed: 1, failed: 0, skipped: 1, total: 2 });
    expect((await db('otp_sessions').where('id', 'ots_gone').first()).status).to.equal('closed');
    expect(await db('service_instances').where('id', 'ins_gone').first()).to.equal(undefined);
  });
});
