// The extension's settings as stored values combine (docs/extension.md "Settings"): the same keys in
// chrome.storage.local (the options page, or a test from the worker) and chrome.storage.managed (a
// company's policy), managed values winning; anything malformed is ignored. Pure.

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

export type Stored = Partial<Record<(typeof SETTING_KEYS)[number], unknown>>;

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
