/**
 * The dashboard in headless Chromium (playwright-core + the system chromium): it shows the flights
 * of a request burst while they run and its counters move live, without a reload.
 */
import { mkdirSync } from 'node:fs';
import { HEADLESS_CHROMIUM_ARGS, systemChromium } from '@flight/test-servers';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { burst } from '../src/load.js';
import { ARTIFACTS, startCluster, until, type TestCluster } from './helpers.js';

let cluster: TestCluster | undefined;
let browser: Browser | undefined;

// Registered before any setup awaits: whatever part of the setup fails, what was started is stopped.
afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
});

beforeAll(async () => {
  const executablePath = systemChromium();
  cluster = await startCluster({ name: 'dashboard', redisUrl: process.env.REDIS_URL!, nodes: 2, latencyMs: 200 });
  browser = await chromium.launch({
    executablePath,
    args: HEADLESS_CHROMIUM_ARGS,
  });
}, 60_000);

it('shows the live flights of a burst, then its counters, updated over server-sent events', async () => {
  if (!browser || !cluster) throw new Error('setup did not finish');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const [node1] = cluster.urls;
  await page.goto(`${node1}/`);
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
  await expect.poll(() => page.getByTestId('node').textContent()).toBe('dashboard-1');
  await expect.poll(() => page.getByTestId('mode').textContent()).toBe('distributed');
  expect(await page.getByTestId('requests').textContent()).toBe('0');

  const sid = `dash-${Date.now().toString(36)}`;
  const body = { questionNumber: 7, question: 'What does the dashboard show?', answer: 'Live flights. [latency:2500]' };
  const running = burst(cluster.urls, `/api/sessions/${sid}/evaluation`, body, 40);

  // While the model call runs: the flight is listed with its stage, status, owner and waiting callers.
  const row = page.getByTestId('flights').locator('tr', { hasText: sid });
  await row.waitFor({ timeout: 10_000 });
  await until(
    'the row to show the callers waiting on node 1',
    async () => Number(await row.getByTestId('waiting').textContent()) === 20,
    5000,
  );
  const cells = await row.locator('td').allTextContents();
  expect(cells[1]).toBe('evaluation');
  expect(['running', 'following']).toContain(cells[2]);
  expect(['dashboard-1', 'dashboard-2']).toContain(cells[3]);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-burst.png'), fullPage: true });

  // When it is over: the counters moved without a reload and the flight moved to "finished".
  const responses = await running;
  expect(responses.every((r) => r.status === 200)).toBe(true);
  await expect.poll(() => page.getByTestId('requests').textContent(), { timeout: 5000 }).toBe('20');
  await page.getByTestId('flights').locator('tr', { hasText: sid }).waitFor({ state: 'detached', timeout: 5000 });
  const finished = page.getByTestId('finished').locator('tr', { hasText: sid });
  await expect.poll(() => finished.locator('td').nth(2).textContent(), { timeout: 5000 }).toBe('succeeded');
  const stageRow = page.getByTestId('stages').locator('tr[data-stage="interview-evaluation"]');
  expect(await stageRow.getByTestId('stage-requests').textContent()).toBe('20');
  expect(Number(await stageRow.getByTestId('stage-model-calls').textContent())).toBeLessThanOrEqual(1);
  // The cluster panel: both nodes, summed across the cluster (read from each node's /api/state).
  await expect
    .poll(() => page.getByTestId('cluster-totals').textContent(), { timeout: 5000 })
    .toBe('2 of 2 nodes: 40 requests, 1 model calls, 98% saved');
  expect(await page.getByTestId('cluster').locator('tr').count()).toBe(2);
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-after.png'), fullPage: true });

  // The library's dashboard, mounted at /flight: the same burst, summed over both nodes.
  await page.getByTestId('library-dashboard').click();
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
  expect(page.url()).toBe(`${node1}/flight/`);
  expect(await page.getByTestId('requests').textContent()).toBe('40');
  expect(await page.getByTestId('runs').textContent()).toBe('1');
  expect(await page.getByTestId('nodes').locator('tr').count()).toBe(2);
  expect(await page.getByTestId('stages').locator('tr', { hasText: 'interview-evaluation' }).textContent()).toMatch(
    /^interview-evaluation20/,
  );
  await page.screenshot({ path: join(ARTIFACTS, 'flight-dashboard.png'), fullPage: true });
}, 45_000);

it('shows the text of a streamed burst arriving in steps, in the burst panel and in the live flights table', async () => {
  if (!browser || !cluster) throw new Error('setup did not finish');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${cluster.urls[0]}/`);
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });

  mkdirSync(ARTIFACTS, { recursive: true });
  const sid = `dash-stream-${Date.now().toString(36)}`;
  await page.selectOption('#bStage', 'evaluation');
  // 4 streams: the browser opens at most 6 connections to the node, one of them the dashboard's own events.
  await page.fill('#bCount', '4');
  await page.fill('#bSession', sid);
  await page.fill('#bLatency', '200');
  await page.check('#bStream');
  await page.fill('#bRate', '10');
  await page.click('#burst button[type=submit]');

  // Sample the page while the answer streams (about 4 s at 10 tokens/s).
  const panel: string[] = [];
  const table: string[] = [];
  const result = page.getByTestId('burst-result');
  const liveText = page.getByTestId('flights').locator('tr', { hasText: sid }).getByTestId('live-text');
  const giveUpAt = Date.now() + 20_000;
  while (!(await result.textContent())?.includes('streamed in')) {
    if (Date.now() > giveUpAt) throw new Error('the streamed burst did not finish');
    const shown = (await page.getByTestId('stream-text').textContent()) ?? '';
    if (shown && shown !== panel.at(-1)) {
      panel.push(shown);
      if (panel.length === 5) await page.screenshot({ path: join(ARTIFACTS, 'dashboard-streaming.png'), fullPage: true });
    }
    const live = (await liveText.textContent({ timeout: 50 }).catch(() => null)) ?? '';
    if (live && live !== table.at(-1)) table.push(live);
  }
  const final = (await page.getByTestId('stream-text').textContent()) ?? '';
  expect(final).toMatch(/^Score \d+\/100/);
  // In steps: many partial texts, each one a prefix of the next.
  expect(panel.length).toBeGreaterThanOrEqual(5);
  for (let i = 1; i < panel.length; i++) expect(panel[i]!.startsWith(panel[i - 1]!)).toBe(true);
  expect(panel[0]!.length).toBeLessThan(final.length / 2);
  // The node's live flights table showed the flight's text while it was still arriving.
  expect(table.some((t) => t.length > 0 && t.length < final.length && final.startsWith(t))).toBe(true);
  // One caller ran the model call; the 3 others followed it and got their first chunk too.
  const summary = await result.textContent();
  expect(summary).toMatch(/\bowner 1\b/);
  expect(summary).toMatch(/\bfollower 3\b/);
  expect(summary).toMatch(/first chunk: owner \d+ ms, followers \d+–\d+ ms/);
}, 45_000);

it('a streamed answer whose connection drops mid-way resumes on another node: the whole text, one model call', async () => {
  if (!browser || !cluster) throw new Error('setup did not finish');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${cluster.urls[0]}/`);
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
  const before = (await (await fetch(`${cluster.model.url}/stats`)).json()) as { calls: number };
  const sid = `dash-resume-${Date.now().toString(36)}`;
  await page.selectOption('#bStage', 'follow-up');
  await page.fill('#bCount', '1');
  await page.fill('#bSession', sid);
  await page.fill('#bLatency', '100');
  await page.check('#bStream');
  await page.fill('#bRate', '20');
  await page.check('#bResume');
  await page.click('#burst button[type=submit]');
  await page.getByTestId('burst-result').filter({ hasText: 'streamed in' }).waitFor({ timeout: 20_000 });
  const note = (await page.getByTestId('resume-note').textContent()) ?? '';
  // Dropped on the node the page came from, resumed on the other after the 5th chunk (the 6th event: the
  // model's first event carries no text); the text shown is the
  // whole answer (the `done` event's), with nothing twice and nothing missing.
  expect(note).toMatch(/^dropped after 5 chunks on dashboard-1; resumed after \d+\.6 on dashboard-2; text whole: yes$/);
  expect(((await page.getByTestId('stream-text').textContent()) ?? '').length).toBeGreaterThan(20);
  const after = (await (await fetch(`${cluster.model.url}/stats`)).json()) as { calls: number };
  expect(after.calls - before.calls).toBe(1);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-resumed.png'), fullPage: true });
}, 45_000);
