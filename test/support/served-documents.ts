// Writes the two documents the service serves about itself, byte for byte as served: /openapi.json and
// GET /api/v1/otp/protocol. A change that must leave them as they are is checked by running this before
// and after it and diffing the two directories:
//   DATABASE_URL=... npx tsx test/support/served-documents.ts /tmp/before
//   (change)  ... /tmp/after;  diff -r /tmp/before /tmp/after
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestService } from './service.js';

async function main(outDir: string): Promise<void> {
  const t = await startTestService();
  try {
    await fs.mkdir(outDir, { recursive: true });
    for (const [file, url] of [
      ['openapi.json', `${t.service.restUrl}/openapi.json`],
      ['otp-protocol.json', `${t.api}/otp/protocol`],
    ] as const) {
      const res = await fetch(url);
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
      await fs.writeFile(path.join(outDir, file), Buffer.from(await res.arrayBuffer()));
    }
  } finally {
    await t.stop();
  }
}

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: npx tsx test/support/served-documents.ts OUT_DIR');
  process.exit(2);
}
await main(outDir);
