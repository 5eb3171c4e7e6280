// The session trace (src/otp/engine/session-trace.ts), fed real transitions of the session machine:
// what it keeps, what it only counts, and how it drops the oldest past its limit.
import { expect } from 'chai';
import type { AnyStateNode, AnyTransitionDefinition, InspectionEvent } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.js';
import { SESSION_TRACE_LIMIT, SessionTrace } from '../../src/otp/engine/session-trace.js';

type Microstep = Extract<InspectionEvent, { type: '@xstate.microstep' }>;

function transitionsOf(node: AnyStateNode): AnyTransitionDefinition[] {
  const own = [...node.transitions.values()].flat().filter((t) => t.target?.length);
  return [...own, ...Object.values(node.states).flatMap((child) => transitionsOf(child))];
}

const all = transitionsOf(sessionMachine.root);
const path = (t: AnyTransitionDefinition) => `${t.source.path.join('.')}>${t.target![0]!.path.join('.')}`;
const find = (from: string, to: string) => all.find((t) => path(t) === `${from}>${to}`)!;
const step = (t: AnyTransitionDefinition) => ({ _transitions: [t] }) as unknown as Microstep;

describe('The session trace', () => {
  const session = { id: 'ots_trace', principal: { projectId: 'prj_trace' } };
  const ping = find('ready.alive', 'ready.awaitingPong');
  const pong = find('ready.awaitingPong', 'ready.alive');
  const lifecycle = all.filter((t) => t !== ping && t !== pong);

  it('keeps lifecycle transitions with their times, and only counts the keepalive round trips', () => {
    expect(ping && pong, 'the keepalive transitions').to.be.ok;
    const started = Date.now();
    const trace = new SessionTrace(session);
    trace.microstep(step(lifecycle[0]!));
    for (let i = 0; i < 3; i++) {
      trace.microstep(step(ping));
      trace.microstep(step(pong));
    }
    const kept = trace.transitions;
    expect(kept.map((x) => [x.from, x.to])).to.deep.equal([
      [null, 'awaitingHello'],
      [lifecycle[0]!.source.path.join('.') || '*', lifecycle[0]!.target![0]!.path.join('.')],
    ]);
    for (const x of kept) expect(Date.parse(x.at)).to.be.within(started, Date.now());
    expect({ pings: trace.pings, pongs: trace.pongs, dropped: trace.dropped }).to.deep.equal({
      pings: 3,
      pongs: 3,
      dropped: 0,
    });
    expect(trace.lastPingAt!.getTime()).to.be.within(started, Date.now());
    expect(trace.state).to.equal('ready.alive');
  });

  it(`keeps the newest ${SESSION_TRACE_LIMIT} transitions, oldest first, and counts those dropped`, () => {
    const trace = new SessionTrace(session);
    const fed = 2 * SESSION_TRACE_LIMIT + 7;
    for (let i = 0; i < fed; i++) trace.microstep(step(lifecycle[i % lifecycle.length]!));
    const kept = trace.transitions;
    expect(kept).to.have.length(SESSION_TRACE_LIMIT);
    // The initial entry and the first fed ones went: 1 + fed in all.
    expect(trace.dropped).to.equal(1 + fed - SESSION_TRACE_LIMIT);
    const expected = Array.from({ length: SESSION_TRACE_LIMIT }, (_, k) => {
      const t = lifecycle[(fed - SESSION_TRACE_LIMIT + k) % lifecycle.length]!;
      return `${t.source.path.join('.') || '*'}>${t.target![0]!.path.join('.')}`;
    });
    expect(kept.map((x) => `${x.from}>${x.to}`)).to.deep.equal(expected);
    const times = kept.map((x) => Date.parse(x.at));
    expect(times).to.deep.equal([...times].sort((a, b) => a - b));
  });
});
