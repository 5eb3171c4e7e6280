// Ids carry a short type prefix and a ULID, so they sort by creation time (stable cursors) and
// never collide across processes.

import { randomBytes, randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid asks its PRNG once per character of the random part (16 per id), and its default asks crypto
// for one byte each time: a pool refilled 4 KiB at a time costs one call per 256 ids instead.
const pool = new Uint8Array(4096);
let poolAt = pool.length;
function pooledRandom(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++] / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

export const IdPrefix = {
  tenant: 'ten',
  project: 'prj',
  apiKey: 'key',
  testCase: 'tc',
  testPlan: 'tp',
  run: 'otr',
  session: 'ots',
  recording: 'rec',
  message: 'msg',
  asset: 'ast',
  bucket: 'bkt',
  instance: 'ins',
  group: 'grp',
  link: 'lnk',
  bug: 'bug',
  ticket: 'tkt',
  requirement: 'req',
  specification: 'spec',
  testRun: 'tr',
  testResult: 'res',
  release: 'rel',
  releasePlan: 'rp',
  milestone: 'ms',
  kbArticle: 'kb',
  memory: 'mem',
  note: 'note',
  webhook: 'wh',
  webhookEvent: 'evt',
  webhookDelivery: 'whd',
  resultImport: 'imp',
  readinessSnapshot: 'rds',
  triageRule: 'air',
  healingProposal: 'heal',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Message ids are minted per frame: shorter and cheaper than a ULID, unique enough for refs. */
let messageCounter = 0;
const messageStem = randomBytes(6).toString('base64url');
export function newMessageId(): string {
  messageCounter = (messageCounter + 1) >>> 0;
  return `msg_${messageStem}${messageCounter.toString(36)}`;
}
