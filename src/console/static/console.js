// The console's only script of its own. The API key (or an OAuth access token) lives in this tab's
// sessionStorage and nowhere else: never in a URL, never in a cookie. Every htmx request and the live
// stream carry it as an Authorization header.
(() => {
  const STORE = 'otp-console-key';
  const BASE = '/console';
  const SIGN_IN = `${BASE}/sign-in`;
  const credential = () => sessionStorage.getItem(STORE);
  const goSignIn = () => {
    const next = location.pathname + location.search;
    location.replace(`${SIGN_IN}?next=${encodeURIComponent(next)}`);
  };
  // Only paths of the console itself are followed after sign-in (no open redirect).
  const nextPath = () => {
    const next = new URLSearchParams(location.search).get('next') || '';
    return /^\/console\/[A-Za-z0-9/_\-?=&.%]*$/.test(next) && !next.startsWith(SIGN_IN) ? next : `${BASE}/runs`;
  };
  const signIn = (token) => {
    sessionStorage.setItem(STORE, token);
    location.replace(nextPath());
  };
  // The hook for OAuth sign-in: a flow that ends with an access token hands it here.
  window.otpConsole = { signIn };

  const onSignIn = location.pathname === SIGN_IN;
  if (!onSignIn && !credential()) {
    goSignIn();
    return;
  }

  document.addEventListener('htmx:config:request', (event) => {
    const token = credential();
    if (!token) return event.preventDefault();
    event.detail.ctx.request.headers.Authorization = `Bearer ${token}`;
  });
  document.addEventListener('htmx:after:request', (event) => {
    const status = event.detail?.ctx?.response?.status;
    if (status === 401) {
      sessionStorage.removeItem(STORE);
      goSignIn();
    }
  });

  document.addEventListener('DOMContentLoaded', () => {
    const form = document.getElementById('sign-in');
    if (form) {
      const input = document.getElementById('key');
      const error = document.getElementById('sign-in-error');
      input.focus();
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        error.textContent = '';
        const token = input.value.trim();
        const res = await fetch(`${BASE}/f/whoami`, { headers: { Authorization: `Bearer ${token}` } }).catch(
          () => null,
        );
        if (res?.ok) return signIn(token);
        error.textContent = res
          ? `This key is not accepted (${res.status}): check it and try again.`
          : 'The service cannot be reached.';
        input.focus();
      });
      return;
    }
    document.getElementById('sign-out')?.addEventListener('click', () => {
      sessionStorage.removeItem(STORE);
      location.replace(SIGN_IN);
    });
    const who = document.getElementById('who');
    if (who) {
      void fetch(`${BASE}/f/whoami`, { headers: { Authorization: `Bearer ${credential()}` } })
        .then((res) => (res.ok ? res.text() : ''))
        .then((text) => (who.textContent = text));
    }
  });
})();
