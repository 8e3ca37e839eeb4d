/**
 * The mounted dashboard in headless Chromium (playwright-core and the system Chromium): a held herd on two
 * nodes appears in the cluster-wide flight list while it runs, then the savings, the chart, the per-stage
 * durations and the unreachable peer are shown live, on the Express and the Fastify mount.
 * `pnpm --filter @flight/dashboard screenshot` writes the README's picture.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort, HEADLESS_CHROMIUM_ARGS, systemChromium } from '@flight/test-servers';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gate, startPeers, type TestNode } from './nodes.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
let browser: Browser | undefined;
let express: TestNode | undefined;
let fastify: TestNode | undefined;
let unreachable: string;

afterAll(async () => {
  await browser?.close();
  await express?.close();
  await fastify?.close();
});

beforeAll(async () => {
  const executablePath = systemChromium();
  const prefix = `dash-ui-${randomUUID().slice(0, 8)}`;
  unreachable = `http://127.0.0.1:${await freePort()}/flight`;
  const common = {
    redisUrl: process.env.REDIS_URL!,
    prefix,
    dashboard: { refreshMs: 200, peerTimeoutMs: 5000, bucketMs: 2000, buckets: 30 },
  };
  [express, fastify] = (await startPeers(2, ([expressPort, fastifyPort]) => [
    {
      ...common,
      nodeId: 'api-1',
      framework: 'express',
      mount: '/flight',
      port: expressPort,
      dashboard: { ...common.dashboard, title: 'flight · api', peers: [`http://127.0.0.1:${fastifyPort}/ops/flight`, unreachable] },
    },
    {
      ...common,
      nodeId: 'api-2',
      framework: 'fastify',
      mount: '/ops/flight',
      port: fastifyPort,
      dashboard: { ...common.dashboard, peers: [`http://127.0.0.1:${expressPort}/flight`], readOnly: false },
    },
  ])) as [TestNode, TestNode];
  browser = await chromium.launch({ executablePath, args: HEADLESS_CHROMIUM_ARGS });
}, 60_000);

const text = (page: Page, testId: string) => page.getByTestId(testId).textContent();
/** How long a wait for the page to show something may take at most: it refreshes every 200 ms, later on a busy machine. */
const UPDATE = { timeout: 30_000 };

it('shows a herd across two nodes while it runs and what it saved, live', async () => {
  if (!browser || !express || !fastify) throw new Error('setup did not finish');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1250 } });
  await page.goto(express.dashboardUrl);
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor(UPDATE);
  expect(await text(page, 'node')).toBe('api-1');
  expect(await text(page, 'mode')).toBe('distributed');
  expect(await text(page, 'requests')).toBe('0');
  expect(await page.getByTestId('forget-form').isVisible()).toBe(false);

  const hold = gate();
  let runs = 0;
  const supplier = async () => {
    runs++;
    await hold.promise;
    return { summary: 'one answer for all' };
  };
  const key = `herd-${randomUUID()}`;
  const calls = [express, fastify].flatMap((node) => Array.from({ length: 100 }, () => node.flight.execute('answers', key, supplier)));
  // While it runs: one flight in the cluster-wide list, with its owner node.
  await expect.poll(() => page.getByTestId('shared').locator('tr', { hasText: 'RUNNING' }).count(), UPDATE).toBe(1);
  const row = await page.getByTestId('shared').locator('tr', { hasText: 'RUNNING' }).textContent();
  expect(row).toMatch(/answers.*RUNNING.*api-[12]/);
  await expect.poll(() => page.getByTestId('local').locator('tr', { hasText: key }).count(), UPDATE).toBe(1);

  hold.open();
  await Promise.all(calls);
  expect(runs).toBe(1);
  await expect.poll(() => text(page, 'requests'), UPDATE).toBe('200');
  expect(await text(page, 'runs')).toBe('1');
  expect(await text(page, 'saved')).toBe('199');
  expect(await text(page, 'savings')).toBe('99.5 %');
  await expect.poll(() => page.getByTestId('shared').locator('tr', { hasText: 'RUNNING' }).count(), UPDATE).toBe(0);
  // The chart's bars add up to the herd.
  const bars = await page
    .getByTestId('chart')
    .locator('g')
    .evaluateAll((groups) =>
      groups.map((g) => ({ requests: Number(g.getAttribute('data-requests')), runs: Number(g.getAttribute('data-runs')) })),
    );
  expect(bars).toHaveLength(30);
  expect(bars.reduce((sum, bar) => sum + bar.requests, 0)).toBe(200);
  expect(bars.reduce((sum, bar) => sum + bar.runs, 0)).toBe(1);
  // Per stage: this node's 100 callers, with their wait or run durations.
  const stage = await page.getByTestId('stages').locator('tr', { hasText: 'answers' }).textContent();
  expect(stage).toMatch(/^answers100/);
  // A duration shows in ms below a second and in s above (the followers waited as long as the page took to show the run).
  expect(stage).toMatch(/\d+(\.\d+)? m?s \/ \d/);
  // The nodes: both healthy, the third unreachable.
  const nodes = page.getByTestId('nodes');
  expect(await nodes.locator('tr', { hasText: 'api-2' }).textContent()).toContain('ok');
  expect(await nodes.locator('tr', { hasText: unreachable }).textContent()).toContain('unreachable');
  expect(await text(page, 'degraded')).toContain(unreachable);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
  const readmeShot = process.env.FLIGHT_DASHBOARD_SCREENSHOT;
  if (readmeShot) {
    mkdirSync(dirname(readmeShot), { recursive: true });
    await page.screenshot({ path: readmeShot, fullPage: true });
  }
  await page.close();
}, 120_000);

it('works under a Fastify prefix, and forgets from the page when not read-only', async () => {
  if (!browser || !express || !fastify) throw new Error('setup did not finish');
  const key = `forget-${randomUUID()}`;
  await fastify.flight.execute('answers', key, async () => 'stored');
  const page = await browser.newPage();
  await page.goto(fastify.dashboardUrl); // no trailing slash: the page still finds its feed
  await page.getByTestId('conn').filter({ hasText: 'live' }).waitFor(UPDATE);
  expect(await text(page, 'node')).toBe('api-2');
  await page.locator('#fStage').fill('answers');
  await page.locator('#fKey').fill(key);
  await page.getByRole('button', { name: 'forget' }).click();
  await expect.poll(() => text(page, 'forget-result'), UPDATE).toBe('forgotten');
  expect((await express.flight.execute('answers', key, async () => 'fresh')).value).toBe('fresh');
  await page.close();
}, 120_000);
