// The extension's settings (docs/extension.md "Settings") read from chrome.storage: local keys a user
// (the options page) or a test (from the worker) sets, and the same keys in managed storage, set by a
// company's policy, which win (settings-of.ts). Read at start and again on every change.
import { SETTING_KEYS, type Settings, type Stored, settingsOf } from './settings-of.js';

export { SETTING_KEYS, type Settings, settingsOf };

export async function readSettings(): Promise<Settings> {
  const local = (await chrome.storage.local.get([...SETTING_KEYS])) as Stored;
  // Managed storage fails where no policy schema applies (some Chromium builds): local alone then.
  const managed = ((await chrome.storage.managed.get([...SETTING_KEYS]).catch(() => ({}))) ?? {}) as Stored;
  return settingsOf(local, managed);
}

/** Calls back when a setting changes, in local or managed storage. */
export function onSettingsChanged(callback: () => void): void {
  chrome.storage.onChanged.addListener((changes, area) => {
    if ((area === 'local' || area === 'managed') && SETTING_KEYS.some((key) => key in changes)) callback();
  });
}

/** The OTP address: the setting, else what the service answers at GET /api/v1/otp/protocol. */
export async function otpAddress(settings: Settings): Promise<string> {
  if (settings.otpUrl) return settings.otpUrl;
  if (!settings.serviceUrl) throw new Error('no serviceUrl set');
  const res = await fetch(`${settings.serviceUrl}/api/v1/otp/protocol`);
  const body = (await res.json().catch(() => undefined)) as { otpUrl?: unknown } | undefined;
  if (!res.ok || typeof body?.otpUrl !== 'string')
    throw new Error(`GET ${settings.serviceUrl}/api/v1/otp/protocol answered ${res.status} without otpUrl`);
  return body.otpUrl;
}
