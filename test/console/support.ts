import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createDevice, type Db } from '@smsgw/db';
import type { Cluster } from '../support/cluster.ts';
import { openE2e } from '../support/e2e-fixture.ts';

/**
 * The console in Debian's Chromium (playwright-core) against the real processes: an API serving
 * the built console, a dispatcher and, when asked, a simulated phone. One browser and one page per
 * test file; every console error and uncaught exception of the page is collected.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SCREENSHOTS = join(ROOT, 'test/console/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ConsoleHarness {
  cluster: Cluster;
  db: Db;
  userId: string;
  apiKey: string;
  /** The simulated phone's device token, when one was asked for. */
  deviceToken: string | undefined;
  browser: Browser;
  page: Page;
  /** Console errors and page errors seen so far (expected 4xx answers of the API left out). */
  errors: string[];
  url(path?: string): string;
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Builds the console when its sources changed (scripts/build-console.mjs skips otherwise). */
export function buildConsole(): void {
  execFileSync(process.execPath, ['scripts/build-console.mjs'], { cwd: ROOT, stdio: 'ignore' });
}

export async function startConsole(options: { phone: boolean; env?: Record<string, string> }): Promise<ConsoleHarness> {
  buildConsole();
  const e2e = await openE2e('console');
  const { db } = e2e;
  const { user, key } = await e2e.user(`console-${randomBytes(3).toString('hex')}`);
  const deviceToken = options.phone ? (await createDevice(db, { userId: user.id, name: 'sim-phone' })).token : undefined;
  const [cluster, browser] = await Promise.all([
    e2e.startCluster({
      dispatchers: 1,
      ...(deviceToken && { deviceTokens: [deviceToken] }),
      env: { SWEEP_INTERVAL_SECONDS: '2', ...options.env },
      simEnv: { SIM_SEND_MS: '5', SIM_DELIVER_MS: '300', SIM_POLL_SECONDS: '2' },
    }),
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] }),
  ]);
  // Closed before the processes stop.
  e2e.defer(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  // Well under the test's own timeout, so that a failure names the step that waited.
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('console', (message) => {
    // Chromium logs every 4xx answer as "Failed to load resource"; the tests cause some on purpose.
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`${error.name}: ${error.message}`));
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    cluster,
    db,
    userId: user.id,
    apiKey: key,
    deviceToken,
    browser,
    page,
    errors,
    url: (path = '') => `${cluster.baseUrl}/console/${path}`,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: () => e2e.close(),
  };
}

/** Signs in through the form with `apiKey` and waits for the Overview. */
export async function signIn(h: ConsoleHarness, apiKey = h.apiKey): Promise<void> {
  await h.page.goto(h.url());
  await h.page.getByLabel('API key').fill(apiKey);
  await h.page.getByRole('button', { name: 'Sign in' }).click();
  await h.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** Goes to a page through the navigation, as a user does (no reload). */
export async function open(h: ConsoleHarness, label: string): Promise<void> {
  const menu = h.page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await h.page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: label, exact: true }).click();
  await h.page.getByRole('heading', { level: 1, name: label }).waitFor();
}

/** The page is no wider than its viewport: nothing to scroll sideways. */
export async function expectNoHorizontalScroll(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}
