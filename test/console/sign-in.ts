// One way the console's browser tests sign in: a new tab through the sign-in form, as a person does,
// with every console error and warning and every page error of the tab collected.
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface SignIn {
  browser: Browser;
  /** The service's address (restUrl). */
  base: string;
  key: string;
  /** Where the tab's console errors and warnings, and its page errors, are collected. */
  problems: string[];
  viewport?: { width: number; height: number };
  /** The path first opened: the sign-in form itself, or a page that sends there (and back after). */
  from?: string;
  /** The sign-in form's address, as `from` sends there (with ?next= when it is another page). */
  form?: RegExp;
  /** Where the tab lands once signed in. */
  landing?: RegExp;
}

export async function signIn({
  browser,
  base,
  key,
  problems,
  viewport = { width: 1440, height: 900 },
  from = '/console/sign-in',
  form = /\/console\/sign-in/,
  landing = /\/console\/runs$/,
}: SignIn): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${page.url()}: ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
  await page.goto(`${base}${from}`);
  await page.waitForURL(form);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(landing);
  return { context, page };
}
