// sessions: as many concurrent idle executor sessions as the open-file limit allows (aim: 10,000),
// keepalive running. Resident memory per session = (VmRSS after − VmRSS before) / sessions, against
// the same for bare connections to the uWebSockets.js echo; keepalive: every session must see its
// pings and none may be closed for a late pong (4408).
import { Fleet, shares } from '../lib/fleet.js';
import { defaultEcho, ephemeralPorts, fdLimit, openFds, rssKiB, sleep, startBaseline } from '../lib/procs.js';
import { fmt, pct, type Row } from '../lib/report.js';
import type { ServiceUnderTest } from '../lib/service.js';
import { merge } from '../lib/stats.js';
import type { Scenario, ScenarioContext } from './context.js';

/** File descriptors a process keeps for itself besides the sessions (database pool, listeners, stdio...). */
const FD_RESERVE = 200;
const CONNECT_CONCURRENCY = 64;

export interface Plan {
  sessions: number;
  workers: number;
  why: string;
}

/** How many sessions this machine can hold: each one costs an fd in the server and one in a client. */
export function plan(wanted: number, serverPid: number, smoke: boolean): Plan {
  const serverRoom = fdLimit(serverPid) - openFds(serverPid) - FD_RESERVE;
  const portRoom = ephemeralPorts() - 1000;
  const sessions = Math.max(1, Math.min(wanted, serverRoom, portRoom));
  const perClient = fdLimit() - FD_RESERVE;
  const workers = smoke ? 1 : Math.max(2, Math.ceil(sessions / perClient));
  const why = `open-file limit ${fmt(fdLimit(serverPid))} in the server (${fmt(serverRoom)} free for sessions), ${fmt(fdLimit())} per client process (${workers} processes), ${fmt(portRoom)} ephemeral ports`;
  return { sessions, workers, why };
}

export async function connectWithProgress(
  ctx: ScenarioContext,
  fleet: Fleet,
  label: string,
  connect: Promise<Array<{ ok: number; failed: number; firstError?: string }>>,
) {
  // An interval, not a loop of sleeps: the caller's clock stops when the connections are open.
  const ticker = setInterval(() => ctx.progress(`${label}: ${fmt(fleet.totals().connected)} connected`), 1000);
  try {
    const results = await connect;
    const failed = results.reduce((n, r) => n + r.failed, 0);
    if (failed)
      ctx.progress(`${label}: ${failed} connections failed (${results.find((r) => r.firstError)?.firstError})`);
    return results.reduce((n, r) => n + r.ok, 0);
  } finally {
    clearInterval(ticker);
  }
}

async function baselinePerConnection(ctx: ScenarioContext, count: number, workers: number): Promise<number> {
  if (!ctx.options.baselines) return NaN;
  const server = await startBaseline(defaultEcho().kind);
  const fleet = await Fleet.start(workers);
  try {
    await sleep(500);
    const before = rssKiB(server.pid);
    const parts = shares(count, fleet.size);
    const ok = await connectWithProgress(
      ctx,
      fleet,
      `sessions/${defaultEcho().kind}`,
      fleet.all((i) => ({
        op: 'raw-connect',
        url: `ws://127.0.0.1:${server.port}/otp`,
        count: parts[i]!,
        concurrency: CONNECT_CONCURRENCY,
      })),
    );
    await sleep(1000);
    return (rssKiB(server.pid) - before) / ok;
  } finally {
    await fleet.stop();
    await server.stop();
  }
}

export const sessionsScenario: Scenario = {
  name: 'sessions',
  title: 'Concurrent idle executor sessions, keepalive running',
  async run(ctx) {
    const { count: wanted, keepaliveSec, rounds } = ctx.options.sessions;
    const service = await ctx.startService({ env: { OTP_KEEPALIVE_SEC: String(keepaliveSec) }, inspect: true });
    let fleet: Fleet | undefined;
    try {
      const p = plan(wanted, service.pid, ctx.options.smoke);
      ctx.progress(`sessions: holding ${fmt(p.sessions)} sessions (${p.why})`);
      fleet = await Fleet.start(p.workers);
      await sleep(500);
      await service.collectGarbage();
      const heapBefore = await service.collectGarbage();
      const before = service.rssKiB();
      const memoryBefore = await memoryOf(service);
      const parts = shares(p.sessions, fleet.size);
      const started = Date.now();
      const f = fleet;
      const ok = await connectWithProgress(
        ctx,
        fleet,
        'sessions/engine',
        fleet.all((i) => ({
          op: 'otp-connect',
          url: service.otpUrl,
          key: service.key,
          count: parts[i]!,
          concurrency: CONNECT_CONCURRENCY,
          maxParallel: 1,
        })),
      );
      const connectS = (Date.now() - started) / 1000;
      ctx.progress(
        `sessions/engine: ${fmt(ok)} sessions open after ${fmt(connectS)} s; watching ${rounds} keepalive rounds of ${keepaliveSec} s`,
      );
      await f.all({ op: 'reset', latency: false });
      const holdMs = (rounds * keepaliveSec + 1) * 1000;
      let peak = service.rssKiB();
      const holdEnd = Date.now() + holdMs;
      while (Date.now() < holdEnd) {
        await sleep(Math.min(1000, holdEnd - Date.now()));
        peak = Math.max(peak, service.rssKiB());
        const t = f.totals();
        ctx.progress(
          `sessions/engine: ${fmt(t.connected)} open, ${fmt(t.pings)} pings answered, RSS ${fmt(service.rssKiB() / 1024, 'MiB')}`,
        );
      }
      const after = service.rssKiB();
      // The same after a full garbage collection: what the sessions themselves hold, without the
      // garbage their pings left since the last collection. Two, as the CI guard does: V8 compacts
      // only the pages a previous marking found fragmented, so a storm's garbage, freed by the first,
      // stays as holes in committed pages until the next (forced, or the process's own).
      await service.collectGarbage();
      const afterOneGc = service.rssKiB();
      const heapAfter = await service.collectGarbage();
      const afterGc = service.rssKiB();
      const memoryAfter = await memoryOf(service);
      const collected = merge(await f.collect());
      const { rows: open } = await service.db.query(
        `SELECT count(*)::int AS n FROM otp_sessions WHERE status = 'open'`,
      );
      const perSession = (afterGc - before) / ok;
      const perSessionRaw = (after - before) / ok;
      const heapPerSession = (heapAfter - heapBefore) / ok;
      const lateCloses = Object.entries(collected.closes).reduce(
        (n, [code, c]) => (code.startsWith('4408') ? n + c : n),
        0,
      );
      const otherCloses = Object.entries(collected.closes).reduce((n, [, c]) => n + c, 0) - lateCloses;

      const baseline = await baselinePerConnection(ctx, p.sessions, p.workers);
      const rows: Row[] = [
        {
          scenario: 'sessions',
          measure: 'concurrent sessions held (open in PostgreSQL)',
          value: Math.min(ok, open[0].n),
          unit: '',
          baseline: `${fmt(p.sessions)} possible`,
          target: '10,000',
          met: Math.min(ok, open[0].n) >= 10_000,
        },
        {
          scenario: 'sessions',
          measure: 'resident memory per session (after two full GCs)',
          value: perSession,
          unit: 'KiB',
          baseline: `${defaultEcho().label} ${fmt(baseline, 'KiB')}/conn`,
          ratio: perSession / baseline,
          target: '≤ 8 KiB',
          met: perSession <= 8,
        },
        {
          scenario: 'sessions',
          measure: `resident memory per session (no forced GC, after ${rounds} rounds)`,
          value: perSessionRaw,
          unit: 'KiB',
        },
        {
          scenario: 'sessions',
          measure: 'JS heap per session (after two full GCs)',
          value: heapPerSession,
          unit: 'KiB',
        },
        {
          scenario: 'sessions',
          measure: `sessions closed for a late pong (4408) in ${rounds} rounds`,
          value: lateCloses,
          unit: '',
          baseline: `${fmt(collected.window.pings)} pings answered`,
          target: '0',
          met: lateCloses === 0 && otherCloses === 0,
        },
        {
          scenario: 'sessions',
          measure: 'sessions that saw no ping',
          value: collected.sessionsWithoutPing,
          unit: '',
          target: '0',
          met: collected.sessionsWithoutPing === 0,
        },
        {
          // The machine pings `keepalive` after the last pong, so a gap is that plus a round trip.
          scenario: 'sessions',
          measure: `longest gap between two pings (keepalive ${keepaliveSec} s)`,
          value: collected.maxPingGapMs,
          unit: 'ms',
        },
      ];
      return {
        rows,
        notes: [
          `${fmt(ok)} sessions over ${p.workers} client processes (${p.why}); connected in ${fmt(connectS)} s, ${CONNECT_CONCURRENCY} handshakes at once per process.`,
          `Service VmRSS after two full GCs (forced through the V8 inspector): ${fmt(before / 1024, 'MiB')} before connecting, ${fmt(afterGc / 1024, 'MiB')} with the sessions open: ${fmt(perSession, 'KiB')} per session (after the first GC alone ${fmt((afterOneGc - before) / ok, 'KiB')}); a bare connection to the ${defaultEcho().label} costs ${fmt(baseline, 'KiB')} (${pct(perSession / baseline)}).`,
          `Without forcing a GC: ${fmt(after / 1024, 'MiB')} after ${rounds} keepalive rounds (peak ${fmt(peak / 1024, 'MiB')}), ${fmt(perSessionRaw, 'KiB')} per session. JS heap in use after a full GC: ${fmt(heapBefore / 1024, 'MiB')} → ${fmt(heapAfter / 1024, 'MiB')}, ${fmt(heapPerSession, 'KiB')} per session.`,
          `Where the resident memory is, per session after the GC (process.memoryUsage): V8 heap committed ${perSessionOf(memoryBefore, memoryAfter, ok, 'heapTotal')} KiB, external ${perSessionOf(memoryBefore, memoryAfter, ok, 'external')} KiB; V8 spaces committed (KiB per session): ${spacesPerSession(memoryBefore, memoryAfter, ok)}.`,
          `OTP_KEEPALIVE_SEC=${keepaliveSec}: ${fmt(collected.window.pings)} pings answered in the window, longest gap ${fmt(collected.maxPingGapMs, 'ms')}, closes ${JSON.stringify(collected.closes)}.`,
        ],
      };
    } finally {
      await fleet?.stop();
      await service.stop();
    }
  },
};

interface Memory {
  heapTotal: number;
  external: number;
  spaces: Record<string, number>;
}

/** The service's memory by kind: V8's committed heap and each of its spaces, and external memory (bytes). */
function memoryOf(service: ServiceUnderTest): Promise<Memory> {
  return service.evaluate<Memory>(`(() => {
    const { heapTotal, external } = process.memoryUsage();
    const v8 = process.getBuiltinModule('node:v8');
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    return { heapTotal, external, spaces };
  })()`);
}

function perSessionOf(before: Memory, after: Memory, sessions: number, field: 'heapTotal' | 'external'): string {
  return fmt((after[field] - before[field]) / 1024 / sessions);
}

/** Each V8 space's committed growth per session, the spaces that grew by at least 0.1 KiB each. */
function spacesPerSession(before: Memory, after: Memory, sessions: number): string {
  return Object.entries(after.spaces)
    .map(([space, size]) => [space, (size - (before.spaces[space] ?? 0)) / 1024 / sessions] as const)
    .filter(([, kib]) => Math.abs(kib) >= 0.1)
    .map(([space, kib]) => `${space} ${fmt(kib)}`)
    .join(', ');
}
