// The machines, drawn from their definitions (never by hand, so a drawing cannot drift): the graph
// from xstate/graph's toDirectedGraph, plus what it leaves out (eventless `always` transitions),
// laid out by ELK (layered, nested states inside their parents) on the server, written as SVG with a
// `data-state` per state and `data-event` per transition. Built once at startup and cached; a run's
// page only marks the states and transitions of its trace (highlighted()).
import ELKModule from 'elkjs/lib/elk.bundled.js';
import type { ElkNode, ElkExtendedEdge } from 'elkjs/lib/elk-api.js';
import { toDirectedGraph, type DirectedGraphNode } from 'xstate/graph';
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { runMachine } from '../../machines/run.machine.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { eventLabel } from '../otp/engine/xstate-adapter.js';
import { escape } from './html.js';
import type { TraceEntry } from '../otp/store/run-trace.js';

const ELK = ELKModule.default ?? (ELKModule as unknown as typeof ELKModule.default);

export type MachineName = 'run' | 'session';
const MACHINES: Record<MachineName, AnyStateMachine> = { run: runMachine, session: sessionMachine };

interface StateInfo {
  path: string;
  key: string;
  kind: 'atomic' | 'compound' | 'final' | 'any';
  initial: boolean;
  /** Events handled without leaving the state. */
  internal: string[];
}

interface EdgeInfo {
  from: string;
  to: string;
  event: string;
  guard?: string;
}

const CHAR_W = 6.6;
const pathOf = (node: AnyStateNode) => node.path.join('.');

function guardName(t: AnyTransitionDefinition): string | undefined {
  const g = t.guard as unknown;
  if (!g) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'object' && g && 'type' in g) return String((g as { type: unknown }).type);
  return 'guard';
}

/** States and transitions of a machine: toDirectedGraph's, with `always` added and actions-only ones folded into their state. */
export function machineGraph(machine: AnyStateMachine): { states: StateInfo[]; edges: EdgeInfo[] } {
  const states: StateInfo[] = [];
  const edges: EdgeInfo[] = [];
  const walk = (node: DirectedGraphNode) => {
    const sn = node.stateNode as AnyStateNode;
    const isRoot = sn.path.length === 0;
    const internal = new Set<string>();
    for (const e of node.edges) {
      const t = e.transition as AnyTransitionDefinition;
      const label = eventLabel(t);
      if (!t.target?.length) internal.add(label);
      else edges.push({ from: isRoot ? '*' : pathOf(sn), to: pathOf(t.target[0]!), event: label, guard: guardName(t) });
    }
    for (const t of (sn.always ?? []) as AnyTransitionDefinition[]) {
      if (t.target?.length) edges.push({ from: pathOf(sn), to: pathOf(t.target[0]!), event: 'always', guard: guardName(t) });
    }
    if (isRoot) {
      if (edges.some((e) => e.from === '*') || internal.size) {
        states.push({ path: '*', key: 'any state', kind: 'any', initial: false, internal: [...internal] });
      }
    } else {
      const parent = sn.parent as AnyStateNode | undefined;
      states.push({
        path: pathOf(sn),
        key: sn.key,
        kind: sn.type === 'final' ? 'final' : node.children.length ? 'compound' : 'atomic',
        initial: Boolean(parent?.initial?.target?.[0] === sn),
        internal: [...internal],
      });
    }
    node.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  return { states, edges };
}

const edgeText = (e: EdgeInfo) => `${e.event}${e.guard ? ` [${e.guard}]` : ''}`;
const edgeKey = (from: string | null, to: string, event: string) => `${from ?? ''}|${to}|${event}`;

// The run machine has many transitions between few states: drawn downwards it fits a page's width.
const DIRECTION: Record<MachineName, string> = { run: 'DOWN', session: 'RIGHT' };

async function layout(name: MachineName): Promise<string> {
  const { states, edges } = machineGraph(MACHINES[name]);
  const nodes = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': DIRECTION[name],
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '70',
      'elk.spacing.nodeNode': '34',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
      'json.shapeCoords': 'ROOT',
      'json.edgeCoords': 'ROOT',
    },
    children: [],
    edges: [],
  };
  for (const s of states) {
    const lines = [s.key, ...(s.internal.length ? [`stays on ${s.internal.join(', ')}`] : [])];
    const width = Math.max(90, ...lines.map((l, i) => l.length * (i ? CHAR_W * 0.95 : CHAR_W + 1.6))) + 30;
    const node: ElkNode = { id: s.path, children: [] };
    if (s.kind === 'compound') node.layoutOptions = { 'elk.padding': '[top=34,left=14,bottom=14,right=14]' };
    else Object.assign(node, { width, height: 34 + (lines.length - 1) * 15 });
    nodes.set(s.path, node);
    const parentPath = s.path.includes('.') ? s.path.slice(0, s.path.lastIndexOf('.')) : undefined;
    (parentPath && nodes.get(parentPath) ? nodes.get(parentPath)!.children! : root.children!).push(node);
  }
  edges.forEach((e, i) => {
    const text = edgeText(e);
    const edge: ElkExtendedEdge = { id: `e${i}`, sources: [e.from], targets: [e.to], labels: [{ text, width: text.length * CHAR_W, height: 14 }] };
    root.edges!.push(edge);
  });
  const laid = await new ELK().layout(root);

  const out: string[] = [];
  const info = new Map(states.map((s) => [s.path, s]));
  const drawNode = (n: ElkNode) => {
    const s = info.get(n.id);
    if (s) {
      const x = n.x ?? 0, y = n.y ?? 0, w = n.width ?? 0, h = n.height ?? 0;
      const title = s.kind === 'compound' ? 14 : h / 2 + (s.internal.length ? -3 : 5);
      out.push(`<g class="state ${s.kind}{{S:${escape(s.path)}}}" data-state="${escape(s.path)}">`);
      out.push(`<title>${escape(s.path === '*' ? 'any state of the machine' : s.path)}</title>`);
      out.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${s.kind === 'any' ? 2 : 8}"></rect>`);
      if (s.initial) out.push(`<circle class="initial" cx="${x + 9}" cy="${y + 9}" r="4"><title>initial state</title></circle>`);
      out.push(`<text x="${x + 18}" y="${y + (s.kind === 'compound' ? 20 : title)}">${escape(s.key)}</text>`);
      if (s.internal.length && s.kind !== 'compound') {
        out.push(`<text class="sub" x="${x + 18}" y="${y + title + 15}">stays on ${escape(s.internal.join(', '))}</text>`);
      }
      out.push('</g>');
    }
    (n.children ?? []).forEach(drawNode);
  };
  (laid.children ?? []).forEach(drawNode);
  (laid.edges ?? []).forEach((edge, i) => {
    const e = edges[i]!;
    const key = edgeKey(e.from === '*' ? null : e.from, e.to, e.event);
    for (const section of (edge as ElkExtendedEdge).sections ?? []) {
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      const d = points.map((p, j) => `${j ? 'L' : 'M'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
      out.push(`<g class="edge{{E:${escape(key)}}}" data-from="${escape(e.from)}" data-to="${escape(e.to)}" data-event="${escape(e.event)}">`);
      out.push(`<path d="${d}" marker-end="url(#arrow-${name})"></path>`);
      const label = edge.labels?.[0];
      if (label) {
        out.push(`<text x="${(label.x ?? 0).toFixed(1)}" y="${((label.y ?? 0) + 11).toFixed(1)}">${escape(e.event)}${e.guard ? `<tspan class="guard"> [${escape(e.guard)}]</tspan>` : ''}</text>`);
      }
      out.push('</g>');
    }
  });
  const w = Math.ceil(laid.width ?? 0), h = Math.ceil(laid.height ?? 0);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="State diagram of the ${name} machine" data-machine="${name}">`
    + `<defs><marker id="arrow-${name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#7b8496"></path></marker></defs>`
    + out.join('') + '</svg>';
}

const cache = new Map<MachineName, string>();

/** Lays out every machine once (about 100 ms each); call before serving pages. */
export async function prepareDiagrams(): Promise<void> {
  for (const name of Object.keys(MACHINES) as MachineName[]) if (!cache.has(name)) cache.set(name, await layout(name));
}

/**
 * The machine's SVG with a trace's states and transitions marked: the state of the last transition
 * `current`, every state and transition the trace went through `visited`/`taken`.
 */
export function highlighted(name: MachineName, trace: TraceEntry[] = []): string {
  const svg = cache.get(name);
  if (!svg) return '<p class="muted">The diagram is being drawn.</p>';
  const visited = new Set<string>();
  const taken = new Set<string>();
  const withAncestors = (p: string) => p.split('.').map((_, i, all) => all.slice(0, i + 1).join('.'));
  for (const t of trace) {
    withAncestors(t.to).forEach((p) => visited.add(p));
    taken.add(edgeKey(t.from, t.to, t.event));
  }
  const current = trace.length ? trace[trace.length - 1]!.to : undefined;
  return svg
    .replace(/\{\{S:([^}]*)\}\}/g, (_, p: string) => (p === current ? ' current' : visited.has(p) ? ' visited' : ''))
    .replace(/\{\{E:([^}]*)\}\}/g, (_, k: string) => (taken.has(k.replace(/&amp;/g, '&')) ? ' taken' : ''));
}
