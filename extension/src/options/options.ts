// The options page: the settings of settings.ts in chrome.storage.local (the worker reads them on
// every change). A setting a policy sets (managed storage) is shown and cannot be edited.
import { SETTING_KEYS } from '../worker/settings.js';

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

void load();
