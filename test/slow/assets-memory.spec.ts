// The 1 GB promise: uploads and downloads stream. A file of FILE_BYTES goes up (chunked, so the
// service cannot know its size) and comes back down through its signed link, while the process's
// memory is sampled; its peak must stay well below the file's size. The service, the S3 server and
// the client all run in this process, so the figure covers all three.
//
// The client is node:http, which waits for 'drain': fetch() with a streamed body keeps about the
// whole body alive on the client side (measured: +96 MiB for a 96 MiB body against a server that
// discards it), which would hide what the service does.

import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import type { StorageDriverName } from '../../src/config.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTestService, type TestService } from '../support/service.js';

const FILE_BYTES = 128 * 1024 * 1024;
const CHUNK = 64 * 1024;

// Each socket read is a new buffer, freed whenever V8 gets round to it; collecting before each
// sample measures what is alive (what the service holds), not how lazy the collector is.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Live heap and buffers, after a full collection. */
function usedNow(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Samples live memory (heap and buffers) until stopped; answers the highest value seen. A full
 * collection costs tens of milliseconds on a quiet machine and hundreds on a busy one: the next
 * sample waits at least three times as long as the last took, so that the transfer keeps most of
 * the time (sampling on a fixed interval, a collection slower than the interval left the transfer
 * almost none, and it timed out). A service that kept the file would grow steadily through the
 * transfer, which a few samples a second catch.
 */
function peakUse() {
  let peak = usedNow();
  let timer: NodeJS.Timeout;
  const sample = () => {
    const started = performance.now();
    peak = Math.max(peak, usedNow());
    timer = setTimeout(sample, Math.max(200, 3 * (performance.now() - started)));
  };
  timer = setTimeout(sample, 200);
  return () => {
    clearTimeout(timer);
    return Math.max(peak, usedNow());
  };
}

/** POSTs FILE_BYTES of random bytes as a chunked multipart form; answers the status, body and digest. */
function uploadLarge(url: string, key: string): Promise<{ status: number; body: any; sha256: string }> {
  const boundary = `memtest${randomBytes(8).toString('hex')}`;
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), sha256: hash.digest('hex') }));
    });
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    let sent = 0;
    const write = () => {
      while (sent < FILE_BYTES) {
        const chunk = randomBytes(Math.min(CHUNK, FILE_BYTES - sent));
        hash.update(chunk);
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end(`\r\n--${boundary}--\r\n`);
    };
    write();
  });
}

/** GETs a URL and hashes the body as it arrives. */
function downloadLarge(url: string): Promise<{ status: number; bytes: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          bytes += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode!, bytes, sha256: hash.digest('hex') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

for (const driver of ['fs', 's3'] as StorageDriverName[]) {
  describe(`Assets memory (${driver} driver)`, function () {
    this.timeout(120_000);
    let t: TestService;
    let s3: TestS3 | undefined;

    before(async () => {
      if (driver === 's3') s3 = await startS3();
      t = await startTestService({ storage: { defaultDriver: driver, s3: s3?.config } });
      await t.request('POST', '/assets/buckets', { body: { name: 'large' } });
    });
    after(async () => {
      await t?.stop();
      await s3?.stop();
    });

    it(`uploads and downloads ${FILE_BYTES / 1024 / 1024} MiB without holding the file in memory`, async () => {
      const baseline = usedNow();
      const uploadPeak = peakUse();
      const up = await uploadLarge(`${t.api}/assets/buckets/large/assets`, t.adminKey);
      const upPeak = uploadPeak();
      expect(up.status, JSON.stringify(up.body)).to.equal(201);
      expect(up.body).to.include({ size: FILE_BYTES, sha256: up.sha256, storageProvider: driver });

      const redirect = await t.request('GET', `/assets/items/${up.body.id}/download`);
      expect(redirect.status).to.equal(302);
      const downloadPeak = peakUse();
      const down = await downloadLarge(redirect.headers.get('location')!);
      const downPeak = downloadPeak();
      expect(down).to.deep.equal({ status: 200, bytes: FILE_BYTES, sha256: up.sha256 });

      const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
      console.log(
        `      ${driver}: live memory above baseline at peak: upload ${mib(upPeak - baseline)} MiB, download ${mib(downPeak - baseline)} MiB (file ${mib(FILE_BYTES)} MiB)`,
      );
      expect(upPeak - baseline).to.be.below(FILE_BYTES / 2);
      expect(downPeak - baseline).to.be.below(FILE_BYTES / 2);
    });
  });
}
