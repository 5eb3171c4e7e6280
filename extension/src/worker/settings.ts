// The extension's settings (docs/extension.md "Settings"): chrome.storage.local keys a user (the
// options page) or a test (from the worker) sets, and the same keys in chrome.storage.managed, set by
// a company's policy, which win. Read at start and again on every change.

export interface Settings {
  /** The service's REST base address, e.g. http://127.0.0.1:8080 (REST is under {serviceUrl}/api/v1). */
  serviceUrl?: string;
  /** An API key of scope write, or an OAuth access token. */
  token?: string;
  /** The OTP WebSocket address; learnt from GET {serviceUrl}/api/v1/otp/protocol when absent. */
  otpUrl?: string;
  /** Declare eval: true and run eval steps. */
  allowEval: boolean;
  /** Runs at once, each in a window of its own (1 to 64). */
  maxParallel: number;
}

export const SETTING_KEYS = ['serviceUrl', 'token', 'otpUrl', 'allowEval', 'maxParallel'] as const;

type Stored = Partial<Record<(typeof SETTING_KEYS)[number], unknown>>;

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** Settings from stored values: managed ones win over local ones; anything malformed is ignored. */
export function settingsOf(local: Stored, managed: Stored): Settings {
  const pick = (key: (typeof SETTING_KEYS)[number]) => (managed[key] !== undefined ? managed[key] : local[key]);
  const parallel = Number(pick('maxParallel'));
  return {
    serviceUrl: text(pick('serviceUrl'))?.replace(/\/+$/, ''),
    token: text(pick('token')),
    otpUrl: text(pick('otpUrl')),
    allowEval: pick('allowEval') === true,
    maxParallel: Number.isInteger(parallel) && parallel >= 1 && parallel <= 64 ? parallel : 1,
  };
}

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
