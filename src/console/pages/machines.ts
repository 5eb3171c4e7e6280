// Both machines, drawn from machines/ at startup.
import { html, raw, type Html } from '../html.js';
import { highlighted } from '../diagram.js';

export function machinesFragment(): Html {
  return html`<p>Drawn from the definitions in <code>machines/</code> when the service starts, so they cannot drift from
    the code. Boxes are states (nested states inside their parent, a dot marks the initial one, a thick border a final one);
    arrows are transitions labelled with their event and, in brackets, their guard. <code>always</code> marks an eventless
    transition, <code>after …</code> a delayed one (the delay's name); "stays on" lists events a state handles without leaving it.</p>
  <h2 id="run-h">Run machine</h2>
  <div class="diagram" aria-labelledby="run-h">${raw(highlighted('run'))}</div>
  <h2 id="session-h">Session machine</h2>
  <div class="diagram" aria-labelledby="session-h">${raw(highlighted('session'))}</div>`;
}
