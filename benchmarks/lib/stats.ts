// Percentiles over latency samples (ms), and merging what the workers collected.
import type { Collected, Counters } from './protocol.js';

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(samples: number[]): Summary {
  if (!samples.length) return { count: 0, p50: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

/** One Collected for the whole fleet: counters summed, samples joined, the longest window. */
export function merge(parts: Collected[]): Collected {
  const sum = (pick: (c: Collected) => Counters): Counters => {
    const out = { ...pick(parts[0]!) };
    for (const part of parts.slice(1))
      for (const k of Object.keys(out) as Array<keyof Counters>) out[k] += pick(part)[k];
    return out;
  };
  const closes: Record<string, number> = {};
  for (const part of parts) for (const [code, n] of Object.entries(part.closes)) closes[code] = (closes[code] ?? 0) + n;
  return {
    elapsedMs: Math.max(...parts.map((p) => p.elapsedMs)),
    window: sum((c) => c.window),
    total: sum((c) => c.total),
    roundTripMs: parts.flatMap((p) => p.roundTripMs),
    dispatchMs: parts.flatMap((p) => p.dispatchMs),
    postMs: parts.flatMap((p) => p.postMs),
    restMs: parts.flatMap((p) => p.restMs),
    closes,
    maxPingGapMs: Math.max(...parts.map((p) => p.maxPingGapMs)),
    sessionsWithoutPing: parts.reduce((n, p) => n + p.sessionsWithoutPing, 0),
    errorSamples: parts.flatMap((p) => p.errorSamples).slice(0, 5),
    lastResumedAt: Math.max(...parts.map((p) => p.lastResumedAt)),
  };
}

/** The middle sample (the mean of the two middle ones for an even count). */
export function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
