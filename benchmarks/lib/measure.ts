// A measured window over a running fleet: warm up, zero the counters, wait, collect; a progress
// line on stderr every second meanwhile.
import type { Fleet } from './fleet.js';
import { sleep } from './procs.js';
import type { Collected } from './protocol.js';
import { fmt } from './report.js';
import { merge } from './stats.js';

export type Progress = (line: string) => void;

export async function measureWindow(
  fleet: Fleet,
  progress: Progress,
  label: string,
  options: {
    warmupS: number;
    durationS: number;
    latency: boolean;
    until?: () => boolean;
    cpu?: { start(): Promise<void>; stop(): Promise<Record<string, number>> };
  },
): Promise<Collected & { cpu?: Record<string, number> }> {
  const tick = async (seconds: number, phase: string) => {
    const end = Date.now() + seconds * 1000;
    let last = fleet.totals().roundTrips;
    let lastAt = Date.now();
    while (Date.now() < end) {
      if (options.until?.()) return;
      await sleep(Math.min(1000, Math.max(0, end - Date.now())));
      const now = fleet.totals();
      const rate = ((now.roundTrips - last) * 1000) / Math.max(1, Date.now() - lastAt);
      last = now.roundTrips;
      lastAt = Date.now();
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      progress(
        `${label} ${phase}: ${fmt(rate)} round trips/s, ${fmt(now.connected)} connected${now.errorFrames ? `, ${now.errorFrames} error frames` : ''}, ${left} s left`,
      );
    }
  };
  await tick(options.warmupS, 'warm-up');
  await Promise.all([fleet.all({ op: 'reset', latency: options.latency }), options.cpu?.start()]);
  await tick(options.durationS, 'measuring');
  const [parts, cpu] = await Promise.all([fleet.collect(), options.cpu?.stop()]);
  return { ...merge(parts), ...(cpu ? { cpu } : {}) };
}
