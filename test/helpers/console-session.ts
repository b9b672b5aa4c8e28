import type { Page } from 'playwright-core';
import { wfxIn } from './cli.js';

/*
 * Signing a test's browser page in to the console, the two ways a person does: the one-time
 * link `wfx console --no-open` prints (the CLI's own key), or an API key pasted on the sign-in
 * page. The caller waits for where it expects to land.
 */

/**
 * Signs `page` in with the link `wfx console --no-open` prints in `cwd` (whose `.wfx/` holds
 * the CLI's credential), and waits for the executions list of the daemon at `url`. Throws when
 * the command fails.
 */
export async function signInWithLink(page: Page, url: string, cwd: string): Promise<void> {
  const link = await wfxIn(['console', '--no-open'], { cwd });
  if (link.code !== 0) throw new Error(`wfx console --no-open exited ${link.code}: ${link.stderr}`);
  await page.goto(link.stdout.trim());
  await page.waitForURL(`${url}/executions`);
}

/** Signs `page`, on the sign-in page, in with the API key `key` (the page then goes where it was sent from). */
export async function signInWithKey(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page
    .getByRole('button', { name: /sign in/i })
    .first()
    .click();
}
