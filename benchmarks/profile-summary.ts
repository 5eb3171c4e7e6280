// Summarises a V8 .cpuprofile (from `npm run bench -- steps --cpu-prof=DIR`): where the samples fall
// by package or source area, the top functions by self time, and the top by inclusive time.
// Usage: npx tsx benchmarks/profile-summary.ts FILE.cpuprofile [--top=N] [--match=TEXT]
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
if (!file) {
  process.stderr.write('usage: npx tsx benchmarks/profile-summary.ts FILE.cpuprofile [--top=N] [--match=TEXT]\n');
  process.exit(2);
}
const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 25);
const match = args.find((a) => a.startsWith('--match='))?.slice(8);

const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const totalSamples = profile.samples.length;
const msPerSample = (profile.endTime - profile.startTime) / 1000 / totalSamples;

function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const src = /\/(src|machines|db)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]!.split('/').slice(0, -1).join('/') || src[2]}`;
  return url;
}

const key = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|src|machines)\//, '$1/')}:${n.callFrame.lineNumber + 1}:${n.callFrame.columnNumber + 1}`;

const self = new Map<string, number>();
const areas = new Map<string, number>();
for (const id of profile.samples) {
  const n = byId.get(id)!;
  self.set(key(n), (self.get(key(n)) ?? 0) + 1);
  const a = area(n.callFrame.url, n.callFrame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + 1);
}

// Inclusive: each sample counts once for every distinct function on its stack.
const inclusive = new Map<string, number>();
for (const id of profile.samples) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const k = key(byId.get(cur)!);
    if (!seen.has(k)) {
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + 1);
    }
  }
}

const pct = (n: number) => `${((n * 100) / totalSamples).toFixed(1).padStart(5)}%`;
const list = (title: string, map: Map<string, number>, filter = (_: string) => true) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, n] of [...map]
    .filter(([k]) => filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    process.stdout.write(`${pct(n)} ${(n * msPerSample).toFixed(0).padStart(7)} ms  ${k}\n`);
  }
};

process.stdout.write(
  `${file}: ${totalSamples} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s\n`,
);
list('By area (self time)', areas);
list('Top functions by self time', self, (k) => !match || k.includes(match));
list('Top functions by inclusive time', inclusive, (k) => (!match || k.includes(match)) && !k.startsWith('(root)'));
