// A machine's drawing in a viewer that zooms and pans (static/inspect.js): fitted to its width when
// the page opens, at most a little above 100%; Ctrl + wheel, the buttons or + − 0 zoom; dragging, the
// wheel (while there is more drawing that way) or the arrow keys move it. `hx-morph-skip` keeps the
// drawing as the reader left it (zoom, marks) when htmx morphs the page on a live refresh: the
// script marks it again from the time line after every swap.

import { diagram, type MachineName, type Marks } from './diagram.js';
import { type Html, html, raw } from './html.js';

/** How to move the drawing, for the line under it. */
export const VIEWER_HINT =
  'Zoom: Ctrl + wheel, + − or the buttons; move: drag, wheel or the arrow keys (on the drawing); 0 fits it again.';

export function viewer(name: MachineName, opts: { id?: string; label: string; marks?: Marks }): Html {
  return html`<div class="viewer" data-viewer>
    <div class="viewer-tools" role="toolbar" aria-label="Zoom: ${opts.label}">
      <button type="button" class="secondary" data-zoom="out" aria-label="Zoom out" title="Zoom out (−)">−</button>
      <output class="zoom-level" data-zoom-level>100%</output>
      <button type="button" class="secondary" data-zoom="in" aria-label="Zoom in" title="Zoom in (+)">+</button>
      <button type="button" class="secondary" data-zoom="fit" title="Fit to the width (0)">Fit</button>
    </div>
    <div class="viewport"${opts.id ? html` id="${opts.id}"` : ''} tabindex="0" role="group" aria-label="${opts.label}" hx-morph-skip>${raw(diagram(name, opts.marks))}</div>
  </div>`;
}
