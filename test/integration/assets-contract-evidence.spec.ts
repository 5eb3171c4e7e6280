// The asset contract (test/support/assets-contract.ts): OTP evidence.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { startService } from '../../src/service.js';
import { fetchBytes, postFile, sha256, upload } from '../support/assets.js';
import { describeAssetsContract } from '../support/assets-contract.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';

describeAssetsContract('OTP evidence', (c) => {
  const { driver, project, storesNothing } = c;

  describe('OTP evidence', () => {
    const locator = { by: 'role', value: 'button', name: 'Go' };

    async function runWithExecutor(p: Awaited<ReturnType<typeof project>>) {
      const tc = await p.req('POST', '/tests/cases', {
        title: 'with evidence',
        steps: [
          { otp: { action: 'click', locator } },
          { otp: { action: 'screenshot', fullPage: true } },
          { otp: { action: 'hover', locator } },
        ],
      });
      const executor = await TestExecutor.connect(c.t.otpUrl, { key: p.key });
      await executor.hello({ screenshot: true });
      const created = await p.req('POST', '/otp/runs', { testCaseIds: [tc.body.id] });
      const runId = created.body.runId as string;
      return { executor, runId };
    }

    it('stores evidence for a run step and links it from the run, with a working download', async () => {
      const p = await project();
      const { executor, runId } = await runWithExecutor(p);
      const exec0 = await executor.next('step.exec');
      executor.result(exec0, 'pass');
      const exec1 = await executor.next('step.exec');
      const shot = randomBytes(20_000);
      const stored = await postFile(c.t, '/otp/evidence', shot, {
        key: p.key,
        filename: 'step1.png',
        type: 'image/png',
        fields: { runId, stepIndex: '1', kind: 'screenshot' },
      });
      expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
      expect(stored.body.assetId).to.match(/^ast_/);
      expect(stored.body).to.include({
        runId,
        stepIndex: 1,
        kind: 'screenshot',
        sha256: sha256(shot),
        size: shot.length,
      });
      const meta = await p.req('GET', `/assets/items/${stored.body.assetId}`);
      expect(meta.body).to.include({ bucket: 'otp-evidence', storageProvider: driver });
      expect(meta.body.evidence).to.deep.equal({ runId, stepIndex: 1, kind: 'screenshot' });

      executor.result(exec1, 'pass', { evidence: { screenshotAssetId: stored.body.assetId, consoleErrors: [] } });
      const exec2 = await executor.next('step.exec');
      executor.result(exec2, 'pass');
      await executor.next('run.finished');

      const run = await p.req('GET', `/otp/runs/${runId}`);
      const evidence = run.body.steps[1].evidence;
      expect(evidence).to.deep.include({
        screenshotAssetId: stored.body.assetId,
        consoleErrors: [],
        screenshotUrl: `/api/v1/assets/items/${stored.body.assetId}/download`,
      });
      expect(evidence.files).to.deep.equal([
        {
          assetId: stored.body.assetId,
          kind: 'screenshot',
          name: 'step1.png',
          contentType: 'image/png',
          size: shot.length,
          downloadUrl: `/api/v1/assets/items/${stored.body.assetId}/download`,
        },
      ]);
      expect(run.body.steps[0].evidence).to.equal(null);
      const redirect = await c.t.request('GET', evidence.screenshotUrl.replace('/api/v1', ''), { key: p.key });
      expect(redirect.status).to.equal(302);
      const file = await fetchBytes(redirect.headers.get('location')!);
      expect(sha256(file.bytes)).to.equal(sha256(shot));
      executor.close();
    });

    it('a finished run (served from memory) shows evidence added or deleted later: at once here, soon in another process', async () => {
      const p = await project();
      const { executor, runId } = await runWithExecutor(p);
      for (let i = 0; i < 3; i++) executor.result(await executor.next('step.exec'), 'pass');
      await executor.next('run.finished');
      executor.close();
      const files = (run: { body: { steps: Array<{ evidence: { files?: unknown[] } | null }> } }) =>
        run.body.steps[0]!.evidence?.files ?? [];
      // Read twice: the second read is served from the finished-run cache.
      expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
      expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
      const second = await startService({ ...c.t.service.config, port: 0, wsPort: 0 }, createLogger('silent'));
      try {
        const atSecond = async () => {
          const res = await fetch(`${second.restUrl}/api/v1/otp/runs/${runId}`, {
            headers: { authorization: `Bearer ${p.key}` },
          });
          expect(res.status).to.equal(200);
          return { body: await res.json() };
        };
        expect(files(await atSecond())).to.deep.equal([]);

        const stored = await postFile(c.t, '/otp/evidence', Buffer.from('after the run'), {
          key: p.key,
          filename: 'late.png',
          type: 'image/png',
          fields: { runId, stepIndex: '0', kind: 'screenshot' },
        });
        expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
        // This process knows at once; the other hears it from the database.
        expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.have.length(1);
        await eventually(async () => expect(files(await atSecond())).to.have.length(1));

        // A key of another project never gets the cached run.
        const stranger = await project();
        expect((await stranger.req('GET', `/otp/runs/${runId}`)).status).to.equal(404);

        expect((await p.req('DELETE', `/assets/items/${stored.body.assetId}`)).status).to.equal(200);
        expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
        await eventually(async () => expect(files(await atSecond())).to.deep.equal([]));
      } finally {
        await second.stop();
      }
    });

    it('a process whose notice connection was cut listens again and forgets the runs it may have missed news of', async () => {
      const p = await project();
      const { executor, runId } = await runWithExecutor(p);
      for (let i = 0; i < 3; i++) executor.result(await executor.next('step.exec'), 'pass');
      await executor.next('run.finished');
      executor.close();
      const second = await startService({ ...c.t.service.config, port: 0, wsPort: 0 }, createLogger('silent'));
      try {
        const filesAtSecond = async () => {
          const res = await fetch(`${second.restUrl}/api/v1/otp/runs/${runId}`, {
            headers: { authorization: `Bearer ${p.key}` },
          });
          expect(res.status).to.equal(200);
          return ((await res.json()).steps[0].evidence?.files ?? []) as unknown[];
        };
        expect(await filesAtSecond()).to.deep.equal([]); // now held in the second process's memory
        const listenerOf = async () =>
          (
            await c.t.service.db.raw(
              `SELECT pid FROM pg_stat_activity WHERE application_name = ? AND query ILIKE 'LISTEN%'`,
              [`otp-notices ${second.instanceId}`],
            )
          ).rows as Array<{ pid: number }>;
        const [cut] = await listenerOf();
        expect(cut, 'the second process listens on its own connection').to.not.equal(undefined);
        await c.t.service.db.raw('SELECT pg_terminate_backend(?)', [cut!.pid]);
        // The change is made while the second process is deaf to it.
        const stored = await postFile(c.t, '/otp/evidence', Buffer.from('while deaf'), {
          key: p.key,
          filename: 'deaf.png',
          type: 'image/png',
          fields: { runId, stepIndex: '0', kind: 'screenshot' },
        });
        expect(stored.status).to.equal(201);
        await eventually(async () => {
          const [now] = await listenerOf();
          expect(now?.pid).to.be.a('number').and.not.equal(cut!.pid);
        });
        await eventually(async () => expect(await filesAtSecond()).to.have.length(1));
        // And it hears the next change as it happens.
        expect((await p.req('DELETE', `/assets/items/${stored.body.assetId}`)).status).to.equal(200);
        await eventually(async () => expect(await filesAtSecond()).to.deep.equal([]));
      } finally {
        await second.stop();
      }
    });

    it('records a step.result pointing at evidence of another run or project without the reference, with a note', async () => {
      const p = await project();
      const stranger = await project();
      const strangerRun = await runWithExecutor(stranger);
      const strangerShot = await postFile(c.t, '/otp/evidence', Buffer.from('theirs'), {
        key: stranger.key,
        fields: { runId: strangerRun.runId, stepIndex: '0', kind: 'screenshot' },
      });
      expect(strangerShot.status).to.equal(201);
      await p.bucket('plain');
      const plain = await upload(c.t, 'plain', Buffer.from('not evidence'), { key: p.key });
      const other = await runWithExecutor(p);
      const otherShot = await postFile(c.t, '/otp/evidence', Buffer.from('other run'), {
        key: p.key,
        fields: { runId: other.runId, stepIndex: '0', kind: 'screenshot' },
      });
      other.executor.close();
      await eventually(async () =>
        expect((await p.req('GET', `/otp/runs/${other.runId}`)).body.status).to.equal('error'),
      );

      const { executor, runId } = await runWithExecutor(p);
      const foreignIds = [strangerShot.body.assetId, plain.body.id, otherShot.body.assetId];
      for (const assetId of foreignIds) {
        const exec = await executor.next('step.exec');
        executor.result(exec, 'pass', { evidence: { screenshotAssetId: assetId } });
      }
      await executor.next('run.finished');
      const run = await p.req('GET', `/otp/runs/${runId}`);
      run.body.steps.forEach((step: any, i: number) => {
        expect(step.status).to.equal('pass');
        expect(step.evidence).not.to.have.property('screenshotAssetId');
        expect(step.evidence).not.to.have.property('screenshotUrl');
        expect(step.evidence.note).to.include(foreignIds[i]).and.include('not evidence uploaded for this run');
      });
      executor.close();
      strangerRun.executor.close();
    });

    it('refuses evidence for a run of another project (404) or a step the run does not have (400), keeping nothing', async () => {
      const p = await project();
      const stranger = await project();
      const { executor, runId } = await runWithExecutor(stranger);
      await storesNothing(async () => {
        const res = await postFile(c.t, '/otp/evidence', Buffer.from('x'), {
          key: p.key,
          fields: { runId, stepIndex: '0', kind: 'screenshot' },
        });
        expect(res.status).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      });
      await storesNothing(async () => {
        const res = await postFile(c.t, '/otp/evidence', Buffer.from('x'), {
          key: stranger.key,
          fields: { runId, stepIndex: '3', kind: 'screenshot' },
        });
        expect(res.status).to.equal(400);
        expect(res.body.error.details.fields).to.deep.equal([{ field: 'body.stepIndex', message: 'must be below 3' }]);
      });
      await storesNothing(async () => {
        const res = await postFile(c.t, '/otp/evidence', Buffer.from('x'), {
          key: stranger.key,
          fields: { runId, kind: 'photo' },
        });
        expect(res.status).to.equal(400);
        const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
        expect(fields).to.include.members(['body.stepIndex', 'body.kind']);
      });
      executor.close();
    });
  });
});
