// The asset contract runs once per driver against real parts: PostgreSQL, the REST listener over
// HTTP, the fs driver on disk, and for s3 an S3-compatible server (s3rver) that checks signatures.
// Each part of it is a spec file of its own that describes its tests inside describeAssetsContract.
import { expect } from 'chai';
import type { StorageDriverName } from '../../src/config.js';
import { census } from './assets.js';
import { startS3, type TestS3 } from './s3.js';
import { startTestService, type TestService } from './service.js';

export const MAX_UPLOAD = 256 * 1024;

export interface AssetsContract {
  driver: StorageDriverName;
  /** The service of the suite (set by its before hook: read it inside tests). */
  t: TestService;
  /** The S3-compatible server when the driver is s3. */
  s3?: TestS3;
  /** A project of its own, with an admin key, so tests do not see each other's assets. */
  project(): Promise<Awaited<ReturnType<typeof newProject>>>;
  /** Asserts that an action stored nothing: no row, no file, no object, no partial file. */
  storesNothing(action: () => Promise<void>): Promise<void>;
}

async function newProject(t: TestService) {
  const { key, projectId, tenantId } = await t.newProject('admin');
  const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
  const bucket = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await req('POST', '/assets/buckets', { name, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  return { key, projectId, tenantId, req, bucket };
}

export function describeAssetsContract(part: string, define: (c: AssetsContract) => void): void {
  for (const driver of ['fs', 's3'] as StorageDriverName[]) {
    describe(`Assets contract (${driver} driver): ${part}`, () => {
      const c: AssetsContract = {
        driver,
        t: undefined as unknown as TestService,
        project: () => newProject(c.t),
        storesNothing: async (action) => {
          const before = await census(c.t, c.s3);
          await action();
          expect(await census(c.t, c.s3)).to.deep.equal(before);
        },
      };
      before(async () => {
        if (driver === 's3') c.s3 = await startS3();
        c.t = await startTestService({
          storage: { defaultDriver: driver, s3: c.s3?.config, maxUploadBytes: MAX_UPLOAD },
          otp: { stepGraceMs: 100 },
        });
      });
      after(async () => {
        await c.t?.stop();
        await c.s3?.stop();
      });
      define(c);
    });
  }
}
