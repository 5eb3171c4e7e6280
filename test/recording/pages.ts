// Pages the recording tests drive, served from loopback by the test itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const LOGIN = `<!doctype html>
<html><head><title>Sign in</title></head>
<body>
  <h1>Sign in</h1>
  <form action="/welcome" method="get" id="login">
    <p><label for="email">Email</label> <input id="email" name="email" type="email"></p>
    <p><label>Password <input name="password" type="password"></label></p>
    <p><input name="card" placeholder="Card number" autocomplete="cc-number"></p>
    <p><select name="plan" aria-label="Plan"><option value="f">Free</option><option value="p">Pro</option><option value="t">Team</option></select></p>
    <p><label><input type="checkbox" name="remember"> Remember me</label></p>
    <p><button type="submit" data-testid="submit">Sign in</button></p>
  </form>
  <p><button type="button">Help</button> <button type="button">Help</button></p>
  <p><a href="/about" title="About us">About</a> <img alt="Logo" width="20" height="20" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></p>
</body></html>`;

const WELCOME = `<!doctype html>
<html><head><title>Welcome</title></head>
<body><h1>Welcome</h1><p id="who"></p><p id="plan"></p>
<script>
  const q = new URLSearchParams(location.search);
  document.getElementById('who').textContent = q.get('email') || '';
  document.getElementById('plan').textContent = (q.get('plan') || '') + (q.get('remember') ? ' remembered' : '');
</script></body></html>`;

const ABOUT = `<!doctype html><html><head><title>About</title></head><body><h1>About</h1></body></html>`;

export interface PageServer {
  origin: string;
  close(): Promise<void>;
}

export async function servePages(): Promise<PageServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const body = path === '/welcome' ? WELCOME : path === '/about' ? ABOUT : path === '/login' ? LOGIN : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
