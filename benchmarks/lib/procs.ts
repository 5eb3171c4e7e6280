// Child processes of the harness (service under test, baseline servers) and what /proc says of them.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/free-port.js';
import { loadUws } from '../../src/otp/transport/index.js';

export { freePort };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs a TypeScript entry point of this repository in its own node process (through tsx). */
export function spawnTs(
  entry: string,
  options: { args?: string[]; env?: NodeJS.ProcessEnv; nodeFlags?: string[] } = {},
): ChildProcess {
  return spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', entry, ...(options.args ?? [])], {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The last lines a process wrote to stderr, for the message when it fails. */
export function keepTail(child: ChildProcess, lines = 20): () => string {
  const tail: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    tail.push(...chunk.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - lines));
  });
  return () => tail.join('\n');
}

/** SIGTERM, then SIGKILL when it has not gone within the grace period. */
export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

export interface Baseline {
  kind: BaselineKind;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export type BaselineKind = 'uws-echo' | 'ws-echo' | 'koa-hello';

/**
 * The echo of the library the service under test carries OTP on: the one OTP_TRANSPORT names (the
 * service the harness starts inherits its environment), else uWS where its binding loads, else ws.
 */
export function defaultEcho(): { kind: BaselineKind; label: string } {
  const transport = process.env.OTP_TRANSPORT;
  const uws = transport === 'uws' || (transport !== 'ws' && loadUws().module);
  return uws ? { kind: 'uws-echo', label: 'uWS echo' } : { kind: 'ws-echo', label: 'ws echo' };
}

/** Starts a baseline server from benchmarks/baselines; it prints {"port":N} once it listens. */
export async function startBaseline(kind: BaselineKind): Promise<Baseline> {
  const child = spawnTs(`benchmarks/baselines/${kind}.ts`);
  const tail = keepTail(child);
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`baseline ${kind} exited (${code}): ${tail()}`)));
  });
  return { kind, port, pid: child.pid!, stop: async () => void (await stopProcess(child)) };
}

function statusField(pid: number, field: string): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/** Resident memory of a process in KiB (VmRSS). */
export function rssKiB(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** Open file descriptors of a process. */
export function openFds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/** The soft open-file limit of a process. */
export function fdLimit(pid: number = process.pid): number {
  const limits = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  return !match || match[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(match[1]);
}

/** How many local ports loopback clients can take (net.ipv4.ip_local_port_range). */
export function ephemeralPorts(): number {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return high! - low! + 1;
  } catch {
    return 28_000;
  }
}

/** CPU seconds (user + system) a process has used, or undefined when it is gone or not visible. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU used by groups of processes between start() and stop(), e.g. the service, its PostgreSQL
 * backends and the client workers. Processes that appear during the window count from zero.
 */
export function cpuMeter(groups: () => Promise<Record<string, number[]>>) {
  let before = new Map<number, number>();
  const sample = async () => {
    const found = await groups();
    const at = new Map<number, number>();
    for (const pids of Object.values(found)) for (const pid of pids) at.set(pid, cpuSeconds(pid) ?? 0);
    return { found, at };
  };
  return {
    async start() {
      before = (await sample()).at;
    },
    async stop(): Promise<Record<string, number>> {
      const { found, at } = await sample();
      const used: Record<string, number> = {};
      for (const [group, pids] of Object.entries(found)) {
        used[group] = pids.reduce((s, pid) => s + Math.max(0, at.get(pid)! - (before.get(pid) ?? 0)), 0);
      }
      return used;
    },
  };
}

/**
 * Event-loop delay of a service during a window, read through its inspector: a histogram from
 * perf_hooks.monitorEventLoopDelay is installed at start() and read (p50/p99/max, ms) at stop().
 */
export function loopDelayMeter(service: { evaluate<T>(expression: string): Promise<T> }) {
  return {
    start: () =>
      service.evaluate(
        `(() => { globalThis.__benchLoop?.disable(); const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 5 }); h.enable(); globalThis.__benchLoop = h; return true; })()`,
      ),
    stop: () =>
      service.evaluate<{ p50: number; p99: number; max: number }>(
        // The histogram records the timer's whole interval: the delay is what exceeds the resolution.
        `(() => { const h = globalThis.__benchLoop; h.disable(); const d = (ns) => Math.max(0, ns / 1e6 - 5); return { p50: d(h.percentile(50)), p99: d(h.percentile(99)), max: d(h.max) }; })()`,
      ),
  };
}

/**
 * A timing the service publishes on one of its diagnostics channels (src/otp/engine/diagnostics.ts), over a
 * window: each message's `ms` goes into a histogram, and `rows` (when given) into a sum. Subscribed
 * through the inspector at start(), read (p50/p99/max in ms, the count, the rows) at stop().
 */
export function channelMeter(service: { evaluate<T>(expression: string): Promise<T> }, channel: string) {
  const slot = `globalThis[${JSON.stringify(`__bench:${channel}`)}]`;
  const name = JSON.stringify(channel);
  return {
    start: () =>
      service.evaluate(
        `(() => { const dc = require('node:diagnostics_channel'); const old = ${slot}; if (old) dc.unsubscribe(${name}, old.listen);
          const h = require('node:perf_hooks').createHistogram(); const m = { h, rows: 0 };
          m.listen = (msg) => { h.record(Math.max(1, Math.round(msg.ms * 1e6))); m.rows += msg.rows ?? 0; };
          dc.subscribe(${name}, m.listen); ${slot} = m; return true; })()`,
      ),
    stop: () =>
      service.evaluate<{ p50: number; p99: number; max: number; count: number; rows: number }>(
        `(() => { const m = ${slot}; require('node:diagnostics_channel').unsubscribe(${name}, m.listen);
          return { p50: m.h.percentile(50) / 1e6, p99: m.h.percentile(99) / 1e6, max: m.h.max / 1e6, count: m.h.count, rows: m.rows }; })()`,
      ),
  };
}
