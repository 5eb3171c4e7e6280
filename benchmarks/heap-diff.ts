// `npx tsx benchmarks/heap-diff.ts [sessions] [--transport=uws|ws] [--keep=DIR]`: where an idle
// session's memory goes. Starts the service (as the sessions scenario does, inspector open), takes a
// heap snapshot after a full GC, connects `sessions` idle executor sessions (hello, welcome, pings
// answered), waits for a keepalive round, takes a second snapshot and prints, per session, the
// self size and count of what was added, grouped by V8 node type and constructor (or function)
// name, largest first (arrays, plain objects and strings also by what holds them), with the JS heap
// per session after a full GC. Resident memory is the sessions scenario's to measure: a heap
// snapshot leaves the process's RSS grown.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectIdle, Fleet } from './lib/fleet.js';
import { sleep } from './lib/procs.js';
import { startService } from './lib/service.js';

interface Group {
  bytes: number;
  count: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function readSnapshot(file: string): Promise<Snapshot> {
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(file)) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString()) as Snapshot;
}

/** Each node's name as grouped: objects and closures by constructor or function, the rest by V8 type. */
function nodeNames(s: Snapshot): string[] {
  const { node_fields: fields, node_types: types } = s.snapshot.meta;
  const [typeAt, nameAt] = [fields.indexOf('type'), fields.indexOf('name')];
  const names: string[] = [];
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const type = types[0][s.nodes[i + typeAt]!]!;
    const named = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden';
    names.push(named ? `${type}:${s.strings[s.nodes[i + nameAt]!]!.slice(0, 50)}` : `(${type})`);
  }
  return names;
}

/**
 * The first strong retainer of every node, as `parent.edge`: what an array, a plain object or a
 * string is held by (the parent's own name says which part of the service keeps it).
 */
function retainers(s: Snapshot, names: string[]): string[] {
  const { node_fields: nodeFields, edge_fields: edgeFields, edge_types: edgeTypes } = s.snapshot.meta;
  const [countAt, typeAt, nameAt, toAt] = [
    nodeFields.indexOf('edge_count'),
    edgeFields.indexOf('type'),
    edgeFields.indexOf('name_or_index'),
    edgeFields.indexOf('to_node'),
  ];
  const held: string[] = new Array(names.length);
  let edge = 0;
  for (let node = 0; node < names.length; node++) {
    const count = s.nodes[node * nodeFields.length + countAt]!;
    for (let e = 0; e < count; e++, edge += edgeFields.length) {
      const type = edgeTypes[0][s.edges[edge + typeAt]!]!;
      if (type === 'weak' || type === 'shortcut') continue;
      const target = s.edges[edge + toAt]! / nodeFields.length;
      if (held[target] !== undefined) continue;
      const nameOrIndex = s.edges[edge + nameAt]!;
      const label = type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : s.strings[nameOrIndex]!;
      held[target] = `${names[node]}.${String(label).slice(0, 40)}`;
    }
  }
  return held;
}

/** A snapshot's nodes summed by name; those without a constructor of their own also by their retainer. */
async function summarise(file: string): Promise<Map<string, Group>> {
  const s = await readSnapshot(file);
  const { node_fields: fields } = s.snapshot.meta;
  const sizeAt = fields.indexOf('self_size');
  const names = nodeNames(s);
  const held = retainers(s, names);
  const groups = new Map<string, Group>();
  for (let node = 0; node < names.length; node++) {
    const name = names[node]!;
    const plain = name.startsWith('(') || name === 'object:Object' || name === 'object:Array';
    const key = plain ? `${name} ← ${held[node] ?? '?'}` : name;
    const group = groups.get(key) ?? { bytes: 0, count: 0 };
    group.bytes += s.nodes[node * fields.length + sizeAt]!;
    group.count++;
    groups.set(key, group);
  }
  return groups;
}

function diff(before: Map<string, Group>, after: Map<string, Group>, sessions: number) {
  const rows: Array<{ key: string; bytesPerSession: number; countPerSession: number }> = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { bytes: 0, count: 0 };
    rows.push({
      key,
      bytesPerSession: (a.bytes - b.bytes) / sessions,
      countPerSession: (a.count - b.count) / sessions,
    });
  }
  return rows.sort((x, y) => y.bytesPerSession - x.bytesPerSession);
}

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
}

async function main(): Promise<void> {
  const sessions = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 2000);
  const transport = option('transport') ?? 'auto';
  const keep = option('keep');
  const dir = keep ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'otp-heap-diff-')));
  await fs.mkdir(dir, { recursive: true });
  const keepaliveSec = 2;
  const service = await startService({
    env: { OTP_KEEPALIVE_SEC: String(keepaliveSec), OTP_TRANSPORT: transport },
    inspect: true,
  });
  const fleet = await Fleet.start(2);
  try {
    await sleep(500);
    const heapBefore = await service.collectGarbage();
    await service.writeHeapSnapshot(path.join(dir, 'before.heapsnapshot'));
    const ok = await connectIdle(fleet, service.otpUrl, service.key, sessions);
    // A keepalive round or two: what a session holds while idle, not only right after its welcome.
    await sleep((keepaliveSec * 2 + 1) * 1000);
    const heapAfter = await service.collectGarbage();
    await service.writeHeapSnapshot(path.join(dir, 'after.heapsnapshot'));
    const rows = diff(
      await summarise(path.join(dir, 'before.heapsnapshot')),
      await summarise(path.join(dir, 'after.heapsnapshot')),
      ok,
    );
    const total = rows.reduce((n, r) => n + r.bytesPerSession, 0);
    process.stdout.write(
      `${ok} idle sessions (transport ${transport}, Node ${process.version}): ` +
        `JS heap ${((heapAfter - heapBefore) / ok).toFixed(2)} KiB/session after a full GC; ` +
        `snapshot diff ${(total / 1024).toFixed(2)} KiB/session\n\n`,
    );
    process.stdout.write('| bytes/session | objects/session | node |\n| ---: | ---: | --- |\n');
    for (const r of rows.filter((r) => Math.abs(r.bytesPerSession) >= 8).slice(0, 40))
      process.stdout.write(`| ${r.bytesPerSession.toFixed(0)} | ${r.countPerSession.toFixed(2)} | ${r.key} |\n`);
  } finally {
    await fleet.stop();
    await service.stop();
    if (!keep) await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exitCode = 1;
});
