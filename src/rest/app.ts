import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Api } from './route.js';
import { errorMiddleware } from './middleware/errors.js';
import { authMiddleware, type Authenticate } from './middleware/auth.js';
import type { Logger } from '../log.js';

export function createRestApp(deps: { api: Api; authenticate: Authenticate; log: Logger }): Koa {
  const app = new Koa();
  app.proxy = true;
  app.use(errorMiddleware(deps.log));
  app.use(authMiddleware(deps.authenticate));
  app.use(koaBody({ jsonLimit: '2mb', multipart: false, text: false, urlencoded: false }));
  const router = deps.api.router();
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}
