import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../harness.js';
import { ReferenceHost } from '../../host/host.js';
import { ensureReviewBuilt } from '../../server/review.js';

/** What the review page's browser tests run against. */
export interface ReviewRig {
  g: TestGateway;
  /** The reference host, registered with a host token (its lease long enough for a whole file's tests). */
  host: ReferenceHost;
  /** A reader token: what the page signs in with. */
  reader: string;
  browser: Browser;
  /** A page of Debian's Chromium on the review page, signed in as the reader (the token in its sessionStorage). */
  page: Page;
  stop(): Promise<void>;
}

/** The review page built, a gateway with the reference host, and Chromium signed in as a reader; `wait`: the page's default timeout. */
export async function startReviewRig(wait: number): Promise<ReviewRig> {
  await ensureReviewBuilt();
  const g = await startTestGateway();
  const host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
  await host.start();
  const reader = await g.token('reader');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(wait);
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${g.url.replace(/\/graphql$/, '')}/review/`);
  await page.evaluate((t) => sessionStorage.setItem('gateway.review.token', t), reader);
  return {
    g, host, reader, browser, page,
    async stop() {
      await browser.close();
      await host.stop();
      await g.stop();
    },
  };
}
