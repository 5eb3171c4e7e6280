// The options page: the settings of settings.ts in chrome.storage.local (the worker reads them on
// every change). A setting a policy sets (managed storage) is shown and cannot be edited. "Sign in"
// gets an access token from the service by OAuth (signin.ts) instead of a pasted key.
import { SETTING_KEYS } from '../worker/settings.js';
import { signIn } from './signin.js';

const field = (id: string) => document.getElementById(id) as HTMLInputElement;

async function load(): Promise<void> {
  const local = await chrome.storage.local.get([...SETTING_KEYS]);
  const managed = await chrome.storage.managed.get([...SETTING_KEYS]).catch(() => ({}) as Record<string, unknown>);
  for (const key of SETTING_KEYS) {
    if (key === 'otpUrl') continue;
    const value = managed[key] ?? local[key];
    const input = field(key);
    if (input.type === 'checkbox') input.checked = value === true;
    else if (value !== undefined) input.value = String(value);
    input.disabled = managed[key] !== undefined;
  }
  field('managed').hidden = Object.keys(managed).length === 0;
}

document.getElementById('form')!.addEventListener('submit', async (event) => {
  event.preventDefault();
  await chrome.storage.local.set({
    serviceUrl: field('serviceUrl').value.trim(),
    token: field('token').value.trim(),
    allowEval: field('allowEval').checked,
    maxParallel: Number(field('maxParallel').value) || 1,
  });
  document.getElementById('status')!.textContent = 'Saved';
});

document.getElementById('signin')!.addEventListener('click', async () => {
  const status = document.getElementById('signin-status')!;
  const serviceUrl = field('serviceUrl').value.trim().replace(/\/+$/, '');
  status.className = '';
  if (!serviceUrl) return void (status.textContent = 'Enter the service address first');
  status.textContent = 'Signing in…';
  try {
    const { oauthClientId } = await chrome.storage.managed
      .get('oauthClientId')
      .catch(() => ({}) as Record<string, unknown>);
    // The address first: the worker connects with the token as soon as it is stored.
    if (!field('serviceUrl').disabled) await chrome.storage.local.set({ serviceUrl });
    await signIn(serviceUrl, typeof oauthClientId === 'string' ? oauthClientId : undefined);
    await load();
    status.textContent = 'Signed in';
  } catch (err) {
    status.className = 'error';
    status.textContent = `Not signed in: ${(err as Error).message}`;
  }
});

void load();
