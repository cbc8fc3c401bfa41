import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { PROJECT_DIR } from '../../db/index.js';

/** Screenshots of the browser tests go here (printed as they are saved). */
export const TEST_OUTPUT = path.join(PROJECT_DIR, 'test-output');

/**
 * Debian's Chromium, headless, through playwright-core, with every request that does not go to
 * `origin` refused and recorded in `offsite` (nothing may come from a CDN).
 */
export async function openBrowser(origin: string, extraArgs: string[] = []): Promise<{ browser: Browser; page: Page; offsite: string[] }> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  const offsite: string[] = [];
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin) || u.startsWith('blob:') || u.startsWith('data:')) return route.continue();
    offsite.push(u);
    return route.abort();
  });
  return { browser, page, offsite };
}

/** Replaces the text of GraphiQL's query or headers editor (Monaco; told apart by their model URIs). */
export async function setEditor(page: Page, which: 'query' | 'headers', text: string) {
  const editor = page.locator(which === 'headers' ? '.monaco-editor[data-uri$="headers.json"]' : '.monaco-editor[data-uri$=".graphql"]').first();
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
  // Whatever the editor closed on its own (brackets, quotes) is after the cursor: remove it.
  await page.keyboard.press('ControlOrMeta+Shift+End');
  await page.keyboard.press('Delete');
  // Monaco renders spaces as no-break spaces.
  const shown = async () => (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ').replace(/\n/g, '');
  if (!text.includes('\n')) await expect.poll(shown, { timeout: 10_000 }).toBe(text);
}

export async function screenshot(page: Page, folder: string, name: string): Promise<string> {
  const dir = path.join(TEST_OUTPUT, folder);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot: ${file}`);
  return file;
}
