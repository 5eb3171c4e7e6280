// Which Chromium the runner drives, and launching it with playwright-core (no browser download).
// Order: --chromium, a system Chromium or Chrome, else the Chromium that @sparticuz/chromium ships
// inside the npm package (so `npm install` alone brings a browser). Only that package's executable
// is used, with Playwright's default arguments: its own `args` are for serverless hosts
// (--disable-web-security, --single-process, ...) and would change what a page under test does.
import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where system browsers usually live (Debian/Ubuntu, Fedora, snap, macOS). */
export const SYSTEM_BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

export function systemBrowser(places: readonly string[] = SYSTEM_BROWSERS): string | undefined {
  return places.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The Chromium that @sparticuz/chromium ships (unpacked to /tmp on first use, about 2 s). */
export async function npmChromium(): Promise<string> {
  const mod = await import('@sparticuz/chromium');
  return mod.default.executablePath();
}

/** `places` are where system browsers are looked for (a test passes none to take the npm fallback). */
export async function findChromium(
  explicit?: string,
  places: readonly string[] = SYSTEM_BROWSERS,
): Promise<{ path: string; source: 'option' | 'system' | 'npm' }> {
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new Error(`--chromium ${explicit}: no such file`);
    return { path: explicit, source: 'option' };
  }
  const system = systemBrowser(places);
  if (system) return { path: system, source: 'system' };
  return { path: await npmChromium(), source: 'npm' };
}

/**
 * Switches the runner adds to Playwright's (docs/runner.md "allowedOrigins"):
 * - WebRTC sends UDP (STUN, TURN, media) straight from the browser, past any proxy: this policy keeps
 *   it to TCP through the proxy, that is through the run's gate (origins.ts).
 * - Chromium reloads an error page by itself a second or so later (a connection the gate refused
 *   looks like a network failure): that retry is a navigation no step asked for, refused again in
 *   whatever step is running then.
 * Chromium's feature switches are left alone: a second --disable-features would replace Playwright's
 * own list (the last one wins), and the gate does not depend on them.
 */
export const RUNNER_SWITCHES = ['--webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-auto-reload'];

/** `args`: RUNNER_SWITCHES for the browser that performs runs (the recorder's has none of them). */
export async function launchChromium(
  executablePath: string,
  headed = false,
  args: readonly string[] = [],
): Promise<Browser> {
  // Signals are the runner's to handle (cli.ts closes the runner, then the browser); Playwright's own
  // SIGINT handler would exit the process with 130 first.
  return chromium.launch({
    executablePath,
    headless: !headed,
    args: [...args],
    handleSIGINT: false,
    handleSIGTERM: false,
  });
}
