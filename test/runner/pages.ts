// The pages the runner's tests drive, served from loopback by the tests themselves. Every control
// writes what happened to it into the page (#log-… elements), so that a later assert, and the test
// reading `actual`, can tell that the action really took place.
export const PLAN_PAGE = `<!doctype html>
<html><head><title>Runner plan</title>
<style>
  body { font-family: sans-serif; }
  #tall { height: 3000px; }
  #box { width: 200px; height: 100px; overflow: auto; border: 1px solid #999; }
  #box-inner { height: 1000px; }
  #later { display: none; }
</style></head>
<body>
  <h1 data-testid="heading">Runner plan</h1>
  <p id="status" data-state="ready" title="Status line">All   systems
     go</p>
  <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="Company logo" width="10" height="10">
  <button id="save" onclick="count('clicks')">Save</button>
  <button id="save-all">Save all</button>
  <button id="mods" onclick="logMods(event)">Modifiers</button>
  <button id="dbl" ondblclick="note('dbl', 'double')">Double me</button>
  <button id="ctx" oncontextmenu="event.preventDefault(); note('ctx', 'right')">Right me</button>
  <button id="off" disabled>Disabled one</button>
  <div id="hover" onmouseenter="note('hover', 'hovered')">Hover me</div>
  <label for="name">Name</label> <input id="name" placeholder="Your name" value="pre">
  <label><input id="agree" type="checkbox"> Agree</label>
  <label><input id="news" type="checkbox" checked> News</label>
  <label for="colour">Colour</label>
  <select id="colour" onchange="note('colour', this.value)">
    <option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option>
  </select>
  <label for="file">Attachment</label> <input id="file" type="file" onchange="readFile(this)">
  <input id="keys" placeholder="Keys here" onkeydown="note('keys', event.key)">
  <ul><li class="item">one</li><li class="item">two</li><li class="item">three</li></ul>
  <section id="first"><h2>First</h2><button onclick="note('edit', 'first')">Edit</button></section>
  <section id="second"><h2>Second</h2><button onclick="note('edit', 'second')">Edit</button></section>
  <div id="box"><div id="box-inner">scroll me</div></div>
  <button id="show" onclick="setTimeout(() => { document.getElementById('later').style.display = 'block' }, 200)">Show later</button>
  <div id="later">Arrived</div>
  <div id="gone">Going away</div>
  <button id="remove" onclick="setTimeout(() => document.getElementById('gone').remove(), 200)">Remove</button>
  <iframe id="app" src="/frame" width="300" height="80"></iframe>
  <a id="same" href="/second">Second page</a>
  <div id="log">
    <span id="log-clicks">0</span> <span id="log-mods"></span> <span id="log-dbl"></span>
    <span id="log-ctx"></span> <span id="log-hover"></span> <span id="log-colour"></span>
    <span id="log-keys"></span> <span id="log-edit"></span> <span id="log-file"></span>
  </div>
  <div id="tall"></div>
  <p id="bottom">The end</p>
<script>
  function note(id, text) { document.getElementById('log-' + id).textContent = text; }
  function count(id) { const el = document.getElementById('log-' + id); el.textContent = String(Number(el.textContent) + 1); }
  function logMods(e) { note('mods', ['altKey', 'ctrlKey', 'metaKey', 'shiftKey'].filter((k) => e[k]).join(',')); }
  async function readFile(input) { const f = input.files[0]; note('file', f.name + ':' + (await f.text())); }
</script>
</body></html>`;

export const FRAME_PAGE = `<!doctype html><html><body>
  <button onclick="document.getElementById('out').textContent = 'framed'">In frame</button>
  <span id="out"></span>
</body></html>`;

export const SECOND_PAGE = `<!doctype html><html><head><title>Second</title></head><body><p id="where">second page</p></body></html>`;

/** A page that loads an image and opens a WebSocket to another origin, and reports what happened. */
export function crossOriginPage(otherOrigin: string): string {
  const ws = otherOrigin.replace(/^http/, 'ws');
  return `<!doctype html><html><head><title>Cross</title></head><body>
  <p id="img">pending</p><p id="ws">pending</p>
  <a id="away" href="${otherOrigin}/">Away</a>
  <img src="${otherOrigin}/pixel.gif" onload="document.getElementById('img').textContent = 'loaded'" onerror="document.getElementById('img').textContent = 'blocked'">
  <script>
    const socket = new WebSocket('${ws}/socket');
    socket.onopen = () => { document.getElementById('ws').textContent = 'open'; };
    socket.onclose = (e) => { document.getElementById('ws').textContent = 'closed ' + e.code; };
  </script>
</body></html>`;
}
