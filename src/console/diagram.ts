// The machines, drawn: machine-graph.ts reads each machine's states and grouped transitions from its
// definition, ELK (layered, nested states inside their parents) lays them out on the server, and this
// writes the SVG, with `data-state` on every state, `data-edge` (`from|to`) on every arrow and
// `data-event` on each event of its label, which is what the console's script marks as a reader moves
// through a trace (static/inspect.js). Built once at startup and cached.
//
// Legibility: text is sized in the drawing's own units (the page shows it at 100% when it fits, and
// zooms from there), edge labels are monospace so that their width is known here and ELK can keep
// them apart, and long lists ("stays on …", guards) wrap.
import ELKModule from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkNode, ElkPoint } from 'elkjs/lib/elk-api.js';
import type { AnyStateMachine } from 'xstate';
import { runMachine } from '../../machines/run.machine.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { escapeHtml } from './html.js';
import { type EdgeInfo, machineGraph, type StateInfo } from './machine-graph.js';

const ELK = ELKModule.default ?? (ELKModule as unknown as typeof ELKModule.default);

export type MachineName = 'run' | 'session';
export const MACHINES: Record<MachineName, AnyStateMachine> = { run: runMachine, session: sessionMachine };

// Font sizes (px in the drawing's units); console.css sets the same. Monospace is 0.6 em wide per
// character in every common font (DejaVu Sans Mono, Menlo, Consolas); the bold sans of a state's name
// is estimated generously.
const TITLE = 15;
const TITLE_CHAR = TITLE * 0.7;
const LABEL = 12.5;
const SMALL = 11.5;
const MONO = 0.602;
const LINE = 1.3;
// A label's guards and a state's "stays on" list wrap at this many characters.
const WRAP = 30;
// An event and its guards stay on one line up to this many characters.
const INLINE = 40;

function wrap(words: string[], width: number, sep: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const [i, word] of words.entries()) {
    const piece = word + (i < words.length - 1 ? sep : '');
    if (line && (line + piece).trimEnd().length > width) {
      lines.push(line.trimEnd());
      line = '';
    }
    line += piece;
  }
  if (line) lines.push(line.trimEnd());
  return lines;
}

interface LabelLine {
  text: string;
  size: number;
  /** The event this line names (its guards follow on lines without one, or in `guards`). */
  event?: string;
  /** The event's guards, on the same line. */
  guards?: string;
  guard?: boolean;
}

function labelLines(edge: EdgeInfo): LabelLine[] {
  return edge.events.flatMap((e): LabelLine[] => {
    const guards = e.guards.length ? `[${e.guards.join(' · ')}]` : '';
    // An event and its guards on one line when they fit; else the guards wrap below it.
    if (`${e.event} ${guards}`.length <= INLINE) return [{ text: e.event, size: LABEL, event: e.event, guards }];
    return [
      { text: e.event, size: LABEL, event: e.event },
      ...wrap(e.guards, WRAP, ' · ').map((text, i, all) => ({
        text: `${i ? ' ' : '['}${text}${i === all.length - 1 ? ']' : ''}`,
        size: SMALL,
        guard: true,
      })),
    ];
  });
}

const stateLines = (s: StateInfo) =>
  s.internal.length ? wrap(['stays on', ...s.internal], WRAP, ', ').map((l) => l.replace('stays on,', 'stays on')) : [];
const textWidth = (lines: LabelLine[]) =>
  Math.max(...lines.map((l) => l.text.length * l.size * MONO + (l.guards ? (l.guards.length + 1) * SMALL * MONO : 0)));
const blockHeight = (lines: LabelLine[]) => lines.reduce((h, l) => h + l.size * LINE, 0);

/**
 * ELK layered, downwards (the machines are deeper than wide: drawn across, the run machine was 2.3
 * times wider than a page), orthogonal edges, thorough crossing minimisation; network-simplex node
 * placement keeps long edges straight.
 */
const LAYOUT: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.layered.edgeLabels.sideSelection': 'SMART_DOWN',
  'elk.layered.crossingMinimization.strategy': 'LAYER_SWEEP',
  'elk.layered.crossingMinimization.greedySwitch.type': 'TWO_SIDED',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.mergeEdges': 'false',
  'elk.layered.spacing.nodeNodeBetweenLayers': '26',
  'elk.layered.spacing.edgeNodeBetweenLayers': '12',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '12',
  'elk.spacing.nodeNode': '36',
  'elk.spacing.edgeNode': '18',
  'elk.spacing.edgeEdge': '12',
  'elk.spacing.edgeLabel': '6',
  'elk.padding': '[top=16,left=16,bottom=16,right=16]',
  'json.shapeCoords': 'ROOT',
  'json.edgeCoords': 'ROOT',
};

// Each label sits on its own edge (the edge runs behind it), so it can be read as that edge's; ELK
// keeps it apart from the others by making it a node of its own between the layers.
const INLINE_LABEL = { 'elk.edgeLabels.inline': 'true' };

async function layout(name: MachineName): Promise<string> {
  const { states, edges } = machineGraph(MACHINES[name]);
  const nodes = new Map<string, ElkNode>();
  const root: ElkNode = { id: 'root', layoutOptions: LAYOUT, children: [], edges: [] };
  for (const s of states) {
    const node: ElkNode = { id: s.path, children: [] };
    if (s.kind === 'compound')
      node.layoutOptions = { 'elk.padding': `[top=${TITLE * 2 + 8},left=16,bottom=16,right=16]` };
    else {
      const sub = stateLines(s);
      const width = Math.max(s.key.length * TITLE_CHAR, ...sub.map((l) => l.length * SMALL * MONO));
      Object.assign(node, {
        width: Math.max(96, Math.ceil(width) + 36),
        height: Math.ceil(TITLE * 2.4 + sub.length * SMALL * LINE),
      });
    }
    nodes.set(s.path, node);
    const parentPath = s.path.includes('.') ? s.path.slice(0, s.path.lastIndexOf('.')) : undefined;
    (parentPath && nodes.get(parentPath) ? nodes.get(parentPath)!.children! : root.children!).push(node);
  }
  const lines = edges.map(labelLines);
  edges.forEach((e, i) => {
    const label = {
      text: e.id,
      width: Math.ceil(textWidth(lines[i]!)) + 8,
      height: Math.ceil(blockHeight(lines[i]!)) + 4,
      layoutOptions: INLINE_LABEL,
    };
    root.edges!.push({ id: `e${i}`, sources: [e.from], targets: [e.to], labels: [label] } as ElkExtendedEdge);
  });
  const laid = await new ELK().layout(root);

  const out: string[] = [];
  const info = new Map(states.map((s) => [s.path, s]));
  const drawNode = (n: ElkNode) => {
    const s = info.get(n.id);
    if (s) out.push(stateSvg(s, n));
    (n.children ?? []).forEach(drawNode);
  };
  (laid.children ?? []).forEach(drawNode);
  for (const [i, edge] of (laid.edges ?? []).entries())
    out.push(edgeSvg(name, edges[i]!, lines[i]!, edge as ElkExtendedEdge));
  const w = Math.ceil(laid.width ?? 0),
    h = Math.ceil(laid.height ?? 0);
  const arrow = (id: string) =>
    `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z"></path></marker>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="State diagram of the ${name} machine" data-machine="${name}" data-width="${w}" data-height="${h}">` +
    `<defs>${arrow(`arrow-${name}`)}${arrow(`arrow-${name}-taken`)}${arrow(`arrow-${name}-just`)}</defs>` +
    out.join('') +
    '</svg>'
  );
}

function stateSvg(s: StateInfo, n: ElkNode): string {
  const x = n.x ?? 0,
    y = n.y ?? 0,
    w = n.width ?? 0,
    h = n.height ?? 0;
  const sub = s.kind === 'compound' ? [] : stateLines(s);
  const titleY = s.kind === 'compound' ? y + TITLE * 1.5 : y + (h - sub.length * SMALL * LINE) / 2 + TITLE * 0.36;
  const parts = [
    `<g class="state ${s.kind}{{S:${escapeHtml(s.path)}}}" data-state="${escapeHtml(s.path)}">`,
    `<title>${escapeHtml(s.path === '*' ? 'any state of the machine' : s.path)}</title>`,
    `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${s.kind === 'any' ? 3 : 9}"></rect>`,
    s.initial
      ? `<circle class="initial" cx="${x + 10}" cy="${y + 10}" r="4.5"><title>initial state</title></circle>`
      : '',
    `<text x="${x + 18}" y="${titleY.toFixed(1)}">${escapeHtml(s.key)}</text>`,
    ...sub.map(
      (line, i) =>
        `<text class="sub" x="${x + 18}" y="${(titleY + TITLE * 0.5 + (i + 1) * SMALL * LINE).toFixed(1)}">${escapeHtml(line)}</text>`,
    ),
    '</g>',
  ];
  return parts.join('');
}

/** A polyline with its corners rounded (orthogonal routes read better without sharp bends). */
function roundedPath(points: ElkPoint[], r = 6): string {
  let d = `M${points[0]!.x.toFixed(1)} ${points[0]!.y.toFixed(1)}`;
  for (let i = 1; i < points.length; i++) {
    const p = points[i]!,
      prev = points[i - 1]!,
      next = points[i + 1];
    if (!next) {
      d += ` L${p.x.toFixed(1)} ${p.y.toFixed(1)}`;
      break;
    }
    const inLen = Math.hypot(p.x - prev.x, p.y - prev.y),
      outLen = Math.hypot(next.x - p.x, next.y - p.y);
    const k = Math.min(r, inLen / 2, outLen / 2);
    const a = { x: p.x - ((p.x - prev.x) / (inLen || 1)) * k, y: p.y - ((p.y - prev.y) / (inLen || 1)) * k };
    const b = { x: p.x + ((next.x - p.x) / (outLen || 1)) * k, y: p.y + ((next.y - p.y) / (outLen || 1)) * k };
    d += ` L${a.x.toFixed(1)} ${a.y.toFixed(1)} Q${p.x.toFixed(1)} ${p.y.toFixed(1)} ${b.x.toFixed(1)} ${b.y.toFixed(1)}`;
  }
  return d;
}

function edgeSvg(name: MachineName, e: EdgeInfo, lines: LabelLine[], laid: ElkExtendedEdge): string {
  const parts = [
    `<g class="edge{{E:${escapeHtml(e.id)}}}" data-edge="${escapeHtml(e.id)}" data-from="${escapeHtml(e.from)}" data-to="${escapeHtml(e.to)}">`,
  ];
  for (const section of laid.sections ?? []) {
    const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
    parts.push(`<path d="${roundedPath(points)}" marker-end="url(#arrow-${name})"></path>`);
  }
  const label = laid.labels?.[0];
  if (label) {
    const x = (label.x ?? 0) + 4;
    let y = (label.y ?? 0) + 2;
    parts.push(
      `<rect class="label-bg" x="${(label.x ?? 0).toFixed(1)}" y="${(label.y ?? 0).toFixed(1)}" width="${label.width}" height="${label.height}" rx="3"></rect>`,
    );
    parts.push('<text>');
    for (const line of lines) {
      y += line.size * LINE;
      const attrs = line.event
        ? ` class="ev{{V:${escapeHtml(`${e.id}|${line.event}`)}}}" data-event="${escapeHtml(line.event)}"`
        : ' class="guard"';
      parts.push(
        `<tspan x="${x.toFixed(1)}" y="${(y - line.size * 0.3).toFixed(1)}"${attrs}>${escapeHtml(line.text)}</tspan>`,
      );
      if (line.guards)
        parts.push(`<tspan class="guard" dx="${(SMALL * MONO).toFixed(1)}">${escapeHtml(line.guards)}</tspan>`);
    }
    parts.push('</text>');
  }
  parts.push('</g>');
  return parts.join('');
}

const cache = new Map<MachineName, string>();

/** Lays out every machine once (a layout is slow: see docs/decisions.md); call before serving pages. */
export async function prepareDiagrams(): Promise<void> {
  for (const name of Object.keys(MACHINES) as MachineName[]) if (!cache.has(name)) cache.set(name, await layout(name));
}

/** Classes to add: to states by path, to edges by id (`from|to`), to the events of an edge by `from|to|event`. */
export interface Marks {
  states?: Map<string, string>;
  edges?: Map<string, string>;
  events?: Map<string, string>;
}

/** The machine's SVG with `marks` added (the placeholders left in the cached drawing are filled). */
export function diagram(name: MachineName, marks: Marks = {}): string {
  const svg = cache.get(name);
  if (!svg) return '<p class="muted">The diagram is being drawn.</p>';
  const add = (map: Map<string, string> | undefined) => (_: string, key: string) => {
    const mark = map?.get(key.replace(/&amp;/g, '&'));
    return mark ? ` ${mark}` : '';
  };
  return svg
    .replace(/\{\{S:([^}]*)\}\}/g, add(marks.states))
    .replace(/\{\{E:([^}]*)\}\}/g, add(marks.edges))
    .replace(/\{\{V:([^}]*)\}\}/g, add(marks.events));
}

/** A machine's transition as the traces record it (a run's, a session's). */
export interface Transition {
  event: string;
  from: string | null;
  to: string;
}

/**
 * The marks of a trace up to `upTo` (an index into it; the last when absent): the state entered last
 * `current`, every state entered before it `visited`, every edge and event taken `taken`, the last
 * one `just`. static/inspect.js computes the same in the browser as a reader moves along the trace.
 */
export function traceMarks(trace: Transition[], upTo = trace.length - 1): Marks {
  const states = new Map<string, string>(),
    edges = new Map<string, string>(),
    events = new Map<string, string>();
  for (let i = 0; i <= upTo && i < trace.length; i++) {
    const t = trace[i]!;
    const parts = t.to.split('.');
    for (let j = 0; j < parts.length; j++) states.set(parts.slice(0, j + 1).join('.'), 'visited');
    if (t.from === null) continue;
    const id = `${t.from || '*'}|${t.to}`;
    const just = i === upTo ? 'taken just' : 'taken';
    edges.set(id, just);
    events.set(`${id}|${t.event}`, just);
  }
  const last = trace[Math.min(upTo, trace.length - 1)];
  if (last) states.set(last.to, 'current');
  return { states, edges, events };
}
