// A route's declared charge (RouteDef.charge, the ai/* routes' AI allowance): the Api charges it once,
// after the request is checked and before the handler, so a refused charge runs nothing; `by:
// 'handler'` leaves the moment to the handler; /openapi.json lists 402 for it.
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import type { Principal } from '../../src/auth/principal.js';
import { errors } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { errorMiddleware } from '../../src/rest/middleware/errors.js';
import { errorStatuses } from '../../src/rest/openapi.js';
import { Api, type RouteDef, type RouteMeter } from '../../src/rest/route.js';

const principal: Principal = { keyId: 'key_1', tenantId: 'ten_1', projectId: 'prj_1', scope: 'read' };

describe('A route’s declared charge', () => {
  const charges: string[] = [];
  const worked: string[] = [];
  let refuse = false;
  const meter: RouteMeter = {
    charge: async (projectId, operation, cost) => {
      if (refuse) throw errors.aiQuotaExceeded('over the allowance', {}, 'https://example.test/upgrade');
      charges.push(`${projectId} ${operation} ${cost}`);
    },
  };
  const routes: RouteDef[] = [
    {
      method: 'get',
      path: '/things',
      auth: 'read',
      tag: 't',
      summary: 'charged before',
      query: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } },
      charge: { operation: 'things.list', cost: 2 },
      handler: () => {
        worked.push('list');
        return { ok: true };
      },
    },
    {
      method: 'post',
      path: '/things/:id/draft',
      auth: 'read',
      tag: 't',
      summary: 'charged by the handler',
      charge: { operation: 'things.draft', cost: 10, by: 'handler' },
      handler: async ({ params, charge }) => {
        if (params.id === 'missing') throw errors.notFound('Thing', params.id);
        await charge();
        await charge(); // once, however often the handler asks
        worked.push('draft');
        return { ok: true };
      },
    },
  ];
  let server: ReturnType<Koa['listen']>;
  let base: string;

  before(async () => {
    const app = new Koa();
    app.use(errorMiddleware(createLogger('silent')));
    app.use((koa, next) => {
      koa.state.principal = principal;
      return next();
    });
    app.use(new Api(meter).add(...routes).middleware());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  after(() => server?.close());
  beforeEach(() => {
    charges.length = 0;
    worked.length = 0;
    refuse = false;
  });

  it('is charged before the handler, after the request is checked; a refusal runs nothing', async () => {
    expect((await fetch(`${base}/things?n=x`)).status).to.equal(400);
    expect(charges).to.deep.equal([]);
    expect((await fetch(`${base}/things`)).status).to.equal(200);
    expect(charges).to.deep.equal(['prj_1 things.list 2']);
    expect(worked).to.deep.equal(['list']);
    refuse = true;
    const refused = await fetch(`${base}/things`);
    expect(refused.status).to.equal(402);
    expect(worked).to.deep.equal(['list']);
  });

  it('by the handler: only once it has something to work on, and once', async () => {
    expect((await fetch(`${base}/things/missing/draft`, { method: 'POST' })).status).to.equal(404);
    expect(charges).to.deep.equal([]);
    expect((await fetch(`${base}/things/t1/draft`, { method: 'POST' })).status).to.equal(200);
    expect(charges).to.deep.equal(['prj_1 things.draft 10']);
  });

  it('lists 402 in /openapi.json for a charged route', () => {
    expect(errorStatuses(routes[0]!)).to.include(402);
    expect(errorStatuses({ ...routes[0]!, charge: undefined })).not.to.include(402);
  });

  it('refuses to build an Api whose routes declare a charge without a meter', () => {
    expect(() => new Api().add(...routes).middleware()).to.throw(/declares a charge, and the Api has no meter/);
  });
});
