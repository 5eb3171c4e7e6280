// `npx tsx benchmarks/gc-settle.ts [sessions] [--transport=uws|ws] [--idle=SEC]`: what one forced GC
// leaves behind after a connect storm. Starts the service (keepalive 5 s, inspector open), connects
// `sessions` idle executor sessions, then prints the process's memory, per session, after one full
// GC, after a second, and (with --idle) after that many seconds of keepalives with no GC forced and
// one forced at the end: RSS, V8's old space committed and in use, and the JS heap in use. V8
// compacts only the pages a previous marking found fragmented, so the rows differ where a storm
// left garbage in committed pages (RESULTS.md, "Issue 36, last part").
import { connectIdle, Fleet } from './lib/fleet.js';
import { sleep } from './lib/procs.js';
import { startService } from './lib/service.js';

interface Memory {
  rss: number;
  heapUsed: number;
  oldCommitted: number;
  oldUsed: number;
}

const MEMORY = `(() => {
  const { rss, heapUsed } = process.memoryUsage();
  const old = require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  return { rss, heapUsed, oldCommitted: old.space_size, oldUsed: old.space_used_size };
})()`;

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
}

async function main(): Promise<void> {
  const sessions = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 19000);
  const transport = option('transport') ?? 'auto';
  const idleSec = Number(option('idle') ?? 0);
  const service = await startService({ env: { OTP_KEEPALIVE_SEC: '5', OTP_TRANSPORT: transport }, inspect: true });
  const fleet = await Fleet.start(2);
  try {
    await sleep(500);
    await service.collectGarbage();
    await service.collectGarbage();
    const before = await service.evaluate<Memory>(MEMORY);
    const ok = await connectIdle(fleet, service.otpUrl, service.key, sessions);
    const show = async (label: string) => {
      const m = await service.evaluate<Memory>(MEMORY);
      const per = (k: keyof Memory) => ((m[k] - before[k]) / 1024 / ok).toFixed(2);
      process.stdout.write(
        `${label}: RSS ${per('rss')}, old space committed ${per('oldCommitted')} (in use ${per('oldUsed')}), JS heap ${per('heapUsed')} KiB per session\n`,
      );
    };
    process.stdout.write(`${ok} sessions over ${transport} (Node ${process.version})\n`);
    await service.collectGarbage();
    await show('after one forced GC');
    await service.collectGarbage();
    await show('after a second');
    if (idleSec > 0) {
      await sleep(idleSec * 1000);
      await service.collectGarbage();
      await show(`after ${idleSec} s of keepalives, then one forced GC`);
    }
  } finally {
    await fleet.stop();
    await service.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exitCode = 1;
});
