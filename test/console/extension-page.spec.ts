// The console's Extension page: install steps with the zip the service serves (EXTENSION_ZIP, else
// the checkout's dist/extension.zip), a clear message while it is not built, and the project's
// sessions that are extensions (and no other executor's).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { zipSync } from 'fflate';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

describe('Console: the Extension page', () => {
  let t: TestService;
  let zip: string;
  const executors: TestExecutor[] = [];
  const get = (p: string, key?: string) =>
    fetch(`${t.service.restUrl}${p}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});

  before(async () => {
    zip = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'otp-ext-zip-')), 'extension.zip');
    t = await startTestService({ extensionZip: zip });
  });
  after(async () => {
    for (const e of executors) e.close();
    await t?.stop();
    fs.rmSync(path.dirname(zip), { recursive: true, force: true });
  });

  it('says the extension is not built, on the page and at the download, until it is; then serves the zip', async () => {
    const shell = await get('/console/extension');
    expect(shell.status).to.equal(200);
    const shellHtml = await shell.text();
    expect(shellHtml).to.contain('/console/f/extension');
    expect(shellHtml).to.match(/<a href="\/console\/extension" aria-current="page">Extension<\/a>/);

    const missing = await get('/console/extension.zip');
    expect(missing.status).to.equal(404);
    expect(await missing.text()).to.contain('npm run build:extension');
    const notBuilt = await (await get('/console/f/extension', t.adminKey)).text();
    expect(notBuilt).to.contain('The extension is not built on this service');
    expect(notBuilt).not.to.contain('/console/extension.zip');

    fs.writeFileSync(zip, zipSync({ 'manifest.json': new TextEncoder().encode('{"manifest_version":3}') }));
    const served = await get('/console/extension.zip');
    expect(served.status).to.equal(200);
    expect(served.headers.get('content-type')).to.equal('application/zip');
    expect(served.headers.get('content-disposition')).to.contain('otp-extension.zip');
    expect(Buffer.from(await served.arrayBuffer()).equals(fs.readFileSync(zip))).to.equal(true);
    const built = await (await get('/console/f/extension', t.adminKey)).text();
    expect(built).to.contain('href="/console/extension.zip"');
    expect(built).to.contain(`<code>${t.service.restUrl}</code>`);
  });

  it('lists the sessions that are extensions, and only those', async () => {
    const extension = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    executors.push(extension);
    await extension.hello({ record: true, replay: true }, { executor: 'extension', name: 'otp-extension' });
    const runner = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    executors.push(runner);
    await runner.hello({ replay: true });
    const fragment = await (await get('/console/f/extension', t.adminKey)).text();
    expect(fragment).to.contain(`data-session="${extension.sessionId}"`);
    expect(fragment).not.to.contain(`data-session="${runner.sessionId}"`);
    expect(fragment).to.contain('1 extension session of this project');
    expect(await (await get('/console/f/extension')).text()).not.to.contain(extension.sessionId!);
  });
});
