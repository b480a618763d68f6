/**
 * Headless Chromium for the dashboard's browser tests: Debian's (`.ci/run` installs it;
 * playwright-core never downloads one), cut off from every host but this machine, with the
 * merchant's image hosts answered by a stand-in.
 */
import fs from 'node:fs';
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** A 1x1 grey PNG: what the stand-in image host answers for every image. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGO4BwAA7ADrqKD6XQAAAABJRU5ErkJggg==',
  'base64',
);

/** Headless, sandbox-free (as root in CI), quiet, and cut off from every other host. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Nothing but this machine resolves: a request elsewhere fails at once, never waits.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** Chromium, closed when the test ends; undefined (and a failed test) when it is missing. */
export async function launchChromium(t: Test): Promise<Browser | undefined> {
  if (!fs.existsSync(CHROMIUM)) {
    t.fail(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it).`);
    return undefined;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * The script errors and console errors of a page, as they come. A failed resource is not one:
 * a 401, 404 or 422 page is an answer a test asks for, not a fault of the page.
 */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
      problems.push(m.text());
    }
  });
  return problems;
}

/**
 * Answers every https image request of a context as the merchant's image host would, with a
 * small PNG (a product's images are previewed from where they are hosted); counts them.
 */
export async function standInImageHost(context: BrowserContext): Promise<{ served: string[] }> {
  const served: string[] = [];
  await context.route(
    (url) => url.protocol === 'https:',
    (route) => {
      if (route.request().resourceType() !== 'image') return route.abort('blockedbyclient');
      served.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'image/png', body: PIXEL });
    },
  );
  return { served };
}
