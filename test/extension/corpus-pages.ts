// Pages of the conformance corpus beyond the runner's own (test/runner/pages.ts): open shadow roots
// (nested too), the accessible-name and text-matching rules, states that need an element.
export const SHADOW_PAGE = `<!doctype html><html><head><title>Shadow</title></head><body>
  <div id="host"></div>
  <p id="shadow-log">none</p>
  <script>
    const root = document.getElementById('host').attachShadow({ mode: 'open' });
    root.innerHTML = '<button data-testid="inner-save" onclick="document.getElementById(\\'shadow-log\\').textContent = \\'inner\\'">Shadow save</button>'
      + '<label for="sname">Shadow name</label><input id="sname" placeholder="Inside the shadow">'
      + '<div id="deep"></div><span class="tag">one</span>';
    const deep = root.getElementById('deep').attachShadow({ mode: 'open' });
    deep.innerHTML = '<a href="#deep" title="Deep link">Deeper</a><span class="tag">two</span>';
    root.querySelector('button').addEventListener('click', () => { document.getElementById('shadow-log').textContent = 'inner'; });
    const closed = document.body.appendChild(document.createElement('div')).attachShadow({ mode: 'closed' });
    closed.innerHTML = '<button>Closed away</button>';
  </script>
</body></html>`;

export const ROLES_PAGE = `<!doctype html><html><head><title>Roles and text</title></head><body>
  <nav aria-label="Main menu"><a href="#a">Home</a> <a href="#b">About us</a></nav>
  <button aria-label="Close dialog">X</button>
  <button style="display:none">Hidden button</button>
  <button aria-hidden="true">Aria hidden</button>
  <div role="button" tabindex="0" aria-disabled="true">Fake disabled</div>
  <h2>Shipping <em>address</em></h2>
  <p id="para">Some <b>bold</b> words and more words</p>
  <span id="lbl">Email address</span><input aria-labelledby="lbl" id="email" value="a@b.c">
  <input aria-label="Search the site" placeholder="Search..." id="search">
  <div role="checkbox" aria-checked="true" id="fake-check">Fancy</div>
  <fieldset disabled><legend><button id="in-legend">In legend</button></legend><button id="in-set">In set</button></fieldset>
  <ul><li>Apple</li><li>apple pie</li><li>Pineapple</li></ul>
  <p id="moving" style="transition: none">Still</p>
  <input type="submit" value="Send it">
  <div style="visibility:hidden" id="invisible">Invisible text</div>
</body></html>`;

export const NOISY_PAGE = `<!doctype html><title>Noisy</title>
<button id="noisy" onclick="console.error('boom from console'); throw new Error('uncaught boom')">Noisy</button>`;
