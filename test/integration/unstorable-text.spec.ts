// Text PostgreSQL cannot store (NUL, unpaired UTF-16 surrogates) is refused where it enters, naming
// the field: every kind of REST input (path ids, query, headers, JSON bodies at any depth and in keys,
// multipart fields) and OTP frames (but for the text a step.result observed on a page, which is stored
// cleaned: observed-text.spec.ts). Before, most of these reached a statement and answered 500.
import net from 'node:net';
import { expect } from 'chai';
import { postFile } from '../support/assets.js';
import { msgId, TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const NUL_MESSAGE = 'contains a NUL character (U+0000), which cannot be stored';
const SURROGATE_MESSAGE = 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';

describe('Text that PostgreSQL cannot store is refused at the edge', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  function expectRefused(res: { status: number; body: any }, field: string, message: string | RegExp, what: string) {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
    expect(res.body.error.code, what).to.equal('VALIDATION_ERROR');
    const fields = res.body.error.details.fields as Array<{ field: string; message: string }>;
    expect(fields, what).to.have.length(1);
    expect(fields[0]!.field, what).to.equal(field);
    if (typeof message === 'string') expect(fields[0]!.message, what).to.equal(message);
    else expect(fields[0]!.message, what).to.match(message);
  }

  it('refuses a NUL in an id of the path, with or without a key', async () => {
    expectRefused(
      await t.request('GET', '/assets/public/ast_a%00b', { key: null }),
      'path',
      /^segment "ast_a%00b" contains a NUL/,
      'public asset',
    );
    expectRefused(await t.request('GET', '/tests/cases/tc_%00'), 'path', /contains a NUL/, 'test case');
    expectRefused(
      await t.request('PATCH', '/bugs/bug_%00', { body: { title: 'x' } }),
      'path',
      /contains a NUL/,
      'bug update',
    );
    expectRefused(await t.request('GET', '/otp/runs/otr_%00x'), 'path', /contains a NUL/, 'run');
    // Percent-escapes that are not UTF-8 stay as they came (the router keeps them): not found, not refused.
    expect((await t.request('GET', '/tests/cases/tc_%ED%A0%80')).status).to.equal(404);
  });

  it('refuses a NUL in a query parameter, its value or its name', async () => {
    expectRefused(await t.request('GET', '/bugs?assignee=a%00b'), 'query.assignee', NUL_MESSAGE, 'filter');
    expectRefused(await t.request('GET', '/bugs?labels=a&labels=%00'), 'query.labels', NUL_MESSAGE, 'repeated filter');
    expectRefused(await t.request('GET', '/bugs?a%00=1'), 'query.a\u0000', /^has a name that contains a NUL/, 'name');
    expectRefused(
      await t.request('GET', '/assets/public/ast_x?x=%00', { key: null }),
      'query.x',
      NUL_MESSAGE,
      'public asset query',
    );
  });

  it('refuses a NUL or a lone surrogate in any string of a JSON body, at any depth and in keys', async () => {
    const post = (path: string, text: string) => t.request('POST', path, { body: text });
    expectRefused(await post('/bugs', '{"title":"a\\u0000b"}'), 'body.title', NUL_MESSAGE, 'top-level string');
    expectRefused(await post('/bugs', '{"title":"\\ud800"}'), 'body.title', SURROGATE_MESSAGE, 'lone high surrogate');
    expectRefused(await post('/bugs', '{"title":"x\\udc00y"}'), 'body.title', SURROGATE_MESSAGE, 'lone low surrogate');
    expectRefused(
      await post(
        '/tests/cases',
        '{"title":"t","steps":[{"otp":{"action":"navigate","url":"https://a.test"}},{"otp":{"action":"type","locator":{"by":"label","value":"x\\u0000"},"text":"y"}}]}',
      ),
      'body.steps[1].otp.locator.value',
      NUL_MESSAGE,
      'deep string',
    );
    expectRefused(
      await post('/otp/runs', '{"testCaseIds":["tc_x"],"vars":{"a\\u0000":"1"}}'),
      'body.vars',
      /^has a property name that contains a NUL/,
      'key',
    );
    expectRefused(
      await post('/otp/runs', '{"testCaseIds":["tc_x"],"vars":{"\\udfff":"1"}}'),
      'body.vars',
      /^has a property name that contains an unpaired/,
      'surrogate key',
    );
    // A surrogate pair is ordinary text.
    const paired = await post('/bugs', '{"title":"\\ud83d\\ude00 works"}');
    expect(paired.status).to.equal(201);
    expect(paired.body.title).to.equal('\u{1F600} works');
  });

  it('refuses a NUL in a header value with the one error body', async () => {
    const url = new URL(t.api);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.write(`GET /api/v1/otp/protocol HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).to.match(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body.error.code).to.equal('VALIDATION_ERROR');
    expect(body.error.details.fields[0].field).to.equal('headers');
  });

  it('refuses a NUL in a multipart text field of an upload', async () => {
    const res = await postFile(t, '/assets/buckets/profil/assets', new Uint8Array([1, 2, 3]), {
      fields: { visibility: 'pub\u0000lic' },
    });
    expectRefused(res, 'body.visibility', NUL_MESSAGE, 'upload field');
    const evidence = await postFile(t, '/otp/evidence', new Uint8Array([1, 2, 3]), {
      fields: { runId: 'otr_\u0000', stepIndex: '0', kind: 'screenshot' },
    });
    expectRefused(evidence, 'body.runId', NUL_MESSAGE, 'evidence field');
  });

  it('answers E_INVALID_FRAME naming the field for such text in an OTP frame', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    try {
      const helloId = msgId();
      executor.raw(
        `{"otp":"1.0","id":"${helloId}","ts":"${new Date().toISOString()}","type":"hello","payload":{"executor":"runner","name":"a\\ud800","capabilities":{}}}`,
      );
      const refused = await executor.next('error', (f) => f.ref === helloId);
      expect(refused.payload.code).to.equal('E_INVALID_FRAME');
      expect(refused.payload.details.fields).to.deep.equal([{ field: 'payload.name', message: SURROGATE_MESSAGE }]);
      await executor.hello();
      const resultId = msgId();
      executor.raw(
        `{"otp":"1.0","id":"${resultId}","ts":"${new Date().toISOString()}","type":"step.result","sessionId":"${executor.sessionId}","runId":"otr_x","ref":"msg_x","payload":{"stepIndex":0,"status":"fail","usedLocator":{"by":"css","value":"a\\u0000b"}}}`,
      );
      const nul = await executor.next('error', (f) => f.ref === resultId);
      expect(nul.payload.code).to.equal('E_INVALID_FRAME');
      expect(nul.payload.details.fields).to.deep.equal([{ field: 'payload.usedLocator.value', message: NUL_MESSAGE }]);
      // Text observed on a page (actual, error.message, console errors) is stored cleaned instead:
      // integration/observed-text.spec.ts.
      const errorId = msgId();
      executor.raw(
        `{"otp":"1.0","id":"${errorId}","ts":"${new Date().toISOString()}","type":"error","sessionId":"${executor.sessionId}","payload":{"code":"E_INTERNAL","message":"m","details":{"deep":[{"k\\u0000":1}]}}}`,
      );
      const key = await executor.next('error', (f) => f.ref === errorId);
      expect(key.payload.details.fields).to.deep.equal([
        { field: 'payload.details.deep[0]', message: `has a property name that ${NUL_MESSAGE}` },
      ]);
    } finally {
      executor.close();
    }
  });
});
