// Both machines, drawn from machines/ at startup, each in a viewer that zooms and pans.
import { type Html, html } from '../html.js';
import { VIEWER_HINT, viewer } from '../viewer.js';

export function machinesFragment(): Html {
  return html`<p>Drawn from the definitions in <code>machines/</code> when the service starts, so they cannot drift from
    the code. Boxes are states (nested states inside their parent, a dot marks the initial one, a thick border a final one);
    arrows are transitions, one arrow for every pair of states, labelled with each of its events and, in brackets, the guards
    that choose it (<code>else</code>: none of the others held). <code>always</code> marks an eventless transition,
    <code>after …</code> a delayed one (the delay's name); "stays on" lists events a state handles without leaving it.
    A run's page and a session's page show the same drawing with the path their trace took. ${VIEWER_HINT}</p>
  <section aria-labelledby="run-h"><h2 id="run-h">Run machine</h2>
    ${viewer('run', { id: 'machine-run', label: 'The run machine' })}</section>
  <section aria-labelledby="session-h"><h2 id="session-h">Session machine</h2>
    ${viewer('session', { id: 'machine-session', label: 'The session machine' })}</section>`;
}
