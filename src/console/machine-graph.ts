// A machine as the console draws it: its states and its transitions, read from the definition through
// xstate/graph's toDirectedGraph (never by hand, so a drawing cannot drift from the code), with what
// that leaves out added (eventless `always` transitions), transitions that only run actions folded
// into their state ("stays on"), and the transitions between the same two states grouped into one
// edge whose label lists each event once with its guards: a busy state (the run machine's
// `finishing`) gets one arrow from each state that leads to it, not one per guard.

import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { type DirectedGraphNode, toDirectedGraph } from 'xstate/graph';
import { eventLabel } from '../otp/engine/xstate-adapter.js';

export interface StateInfo {
  /** Dotted path without the machine id; `*` for the box that stands for any state. */
  path: string;
  key: string;
  kind: 'atomic' | 'compound' | 'final' | 'any';
  initial: boolean;
  /** Events handled without leaving the state. */
  internal: string[];
}

/** One event of an edge: the transitions of that event between the same two states, with their guards. */
export interface EdgeEvent {
  event: string;
  /** In the machine's order; `else` for an unguarded transition after guarded ones. */
  guards: string[];
}

export interface EdgeInfo {
  /** `from|to`: what the console's script matches a trace entry against. */
  id: string;
  from: string;
  to: string;
  events: EdgeEvent[];
}

export interface MachineGraph {
  states: StateInfo[];
  edges: EdgeInfo[];
}

const pathOf = (node: AnyStateNode) => node.path.join('.');

function guardName(t: AnyTransitionDefinition): string | undefined {
  const g = t.guard as unknown;
  if (!g) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'object' && g && 'type' in g) return String((g as { type: unknown }).type);
  return 'guard';
}

export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const states: StateInfo[] = [];
  const edges = new Map<string, EdgeInfo>();
  // Events of the state being read that had a guarded transition: an unguarded one after them is
  // taken when none of their guards holds (`else`).
  let guarded = new Set<string>();
  const add = (from: string, to: string, event: string, guard: string | undefined) => {
    const id = `${from}|${to}`;
    const edge = edges.get(id) ?? { id, from, to, events: [] };
    edges.set(id, edge);
    let item = edge.events.find((e) => e.event === event);
    if (!item) edge.events.push((item = { event, guards: [] }));
    if (guard) guarded.add(event);
    if (guard || guarded.has(event)) item.guards.push(guard ?? 'else');
  };
  const walk = (node: DirectedGraphNode) => {
    const sn = node.stateNode as AnyStateNode;
    const isRoot = sn.path.length === 0;
    const from = isRoot ? '*' : pathOf(sn);
    const internal = new Set<string>();
    guarded = new Set();
    for (const e of node.edges) {
      const t = e.transition as AnyTransitionDefinition;
      if (!t.target?.length) internal.add(eventLabel(t));
      else add(from, pathOf(t.target[0]!), eventLabel(t), guardName(t));
    }
    for (const t of (sn.always ?? []) as AnyTransitionDefinition[]) {
      if (t.target?.length) add(from, pathOf(t.target[0]!), 'always', guardName(t));
    }
    if (!isRoot) states.push(stateInfo(node, internal));
    else if ([...edges.values()].some((e) => e.from === '*') || internal.size) {
      states.push({ path: '*', key: 'any state', kind: 'any', initial: false, internal: [...internal] });
    }
    node.children.forEach(walk);
  };
  walk(toDirectedGraph(machine));
  return { states, edges: [...edges.values()] };
}

/** A state of the machine (not its root): its kind, whether its parent starts in it, the events it handles in place. */
function stateInfo(node: DirectedGraphNode, internal: Set<string>): StateInfo {
  const sn = node.stateNode as AnyStateNode;
  const parent = sn.parent as AnyStateNode | undefined;
  return {
    path: pathOf(sn),
    key: sn.key,
    kind: sn.type === 'final' ? 'final' : node.children.length ? 'compound' : 'atomic',
    initial: Boolean(parent?.initial?.target?.[0] === sn),
    internal: [...internal],
  };
}
