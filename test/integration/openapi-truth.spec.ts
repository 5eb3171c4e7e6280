// /openapi.json says what the service really does: every media type a documented route answers, and
// the rules a body must meet that a generated client can check before it sends one.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

describe('/openapi.json tells the whole truth', () => {
  let t: TestService;
  let spec: any;
  before(async () => {
    t = await startTestService();
    spec = (await t.request('GET', '/openapi.json')).body;
  });
  after(async () => t?.stop());

  it('documents the media type each public GET route of the document answers', async () => {
    const unanswered: string[] = [];
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      const op = item.get;
      // Routes without parameters or a key: what anyone can fetch as it is.
      if (!op || path.includes('{') || op.security?.length) continue;
      const res = await fetch(`${t.service.restUrl}${path}`);
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const documented = Object.keys(op.responses[String(res.status)]?.content ?? {});
      if (!documented.includes(type))
        unanswered.push(`${path}: answered ${res.status} ${type}, documented ${documented.join(', ') || 'nothing'}`);
    }
    expect(unanswered).to.deep.equal([]);
    expect(Object.keys(spec.paths['/oauth/jwks'].get.responses['200'].content)).to.deep.equal([
      'application/jwk-set+json',
    ]);
  });

  it('says in the run request schema that exactly one of testCaseIds and planId is given', () => {
    expect(spec.components.schemas.OtpRunRequest.oneOf).to.deep.equal([
      { required: ['testCaseIds'] },
      { required: ['planId'] },
    ]);
  });
});
