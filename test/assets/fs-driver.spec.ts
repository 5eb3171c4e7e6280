// The fs storage driver leaves nothing behind when a body fails (a size or quota limit reached while
// it streams). The rare case of a body failing before its file is even open is tried many times in
// test/slow/fs-driver-race.spec.ts.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { FsDriver } from '../../src/assets/storage/fs-driver.js';
import { UrlSigner } from '../../src/assets/storage/url-signer.js';

describe('fs storage driver', () => {
  let root: string;
  let driver: FsDriver;
  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'fs-driver-'));
    driver = new FsDriver(root, new UrlSigner(randomBytes(32)));
  });
  after(async () => fs.rm(root, { recursive: true, force: true }));

  it('removes the partial file of a body that fails while it streams', async () => {
    let sent = 0;
    // One chunk written (the file is open and holds it), then the limit is reached.
    const body = new Readable({
      read() {
        if (sent++ === 0) this.push(Buffer.alloc(64 * 1024, 1));
        else setImmediate(() => this.destroy(new Error('limit reached')));
      },
    });
    const refused = await driver.put('ten_x/prj_x/ast_failing', body).then(
      () => false,
      () => true,
    );
    expect(refused).to.equal(true);
    expect(await fs.readdir(path.join(root, 'ten_x', 'prj_x'))).to.deep.equal([]);
  });

  it('stores a body that ends well, under its key and nothing else', async () => {
    await driver.put('ten_y/prj_y/ast_ok', Readable.from([Buffer.from('hello')]));
    expect(await fs.readdir(path.join(root, 'ten_y', 'prj_y'))).to.deep.equal(['ast_ok']);
    expect(await fs.readFile(path.join(root, 'ten_y', 'prj_y', 'ast_ok'), 'utf8')).to.equal('hello');
  });
});
