// Ids carry a short type prefix and a ULID, so they sort by creation time (stable cursors) and
// never collide across processes.
import { monotonicFactory } from 'ulid';
import { randomBytes } from 'node:crypto';

const nextUlid = monotonicFactory();

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
