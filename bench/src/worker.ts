/**
 * A benchmark worker process (forked by pool.ts): holds one contender at a time and runs the tasks
 * the parent sends over IPC.
 */
import { Redis } from 'ioredis';
import { createContender, type Contender, type ContenderName, type ContenderOptions } from './contenders/index.js';
import { herd, hold, memory, series, waiters } from './tasks.js';

let contender: Contender | undefined;
let counter: Redis | undefined;
let held: ReturnType<typeof hold> | undefined;
let parked: ReturnType<typeof waiters> | undefined;

const handlers: Record<string, (args: any) => Promise<unknown>> = {
  /** Connects the upstream counter once, so contender setups open only the contender's connections. */
  async init(args: { counterUrl: string }) {
    counter ??= new Redis(args.counterUrl);
    await counter.ping();
    return { pid: process.pid };
  },
  async setup(args: { name: ContenderName; options: ContenderOptions }) {
    await contender?.close();
    contender = undefined;
    contender = await createContender(args.name, args.options);
    return { pid: process.pid };
  },
  async teardown() {
    await contender?.close();
    contender = undefined;
    return null;
  },
  herd: (args) => herd(need(), counter, args),
  series: (args) => series(need(), counter, args),
  async holdStart(args) {
    held = hold(need(), counter, args);
    return held.started(args.timeoutMs ?? 10_000);
  },
  async holdRelease() {
    const h = held;
    held = undefined;
    if (!h) throw new Error('nothing held');
    return h.release();
  },
  async waitersStart(args) {
    parked = waiters(need(), counter, args);
    const during = await parked.waiting(args.settleMs);
    return { before: parked.before, during };
  },
  async waitersFinish() {
    const p = parked;
    parked = undefined;
    if (!p) throw new Error('no waiters');
    const result = await p.finish();
    return { ...result, after: memory() };
  },
  async memory() {
    return memory();
  },
};

function need(): Contender {
  if (!contender) throw new Error('no contender set up');
  return contender;
}

process.on('message', async (message: { id: number; cmd: string; args: unknown }) => {
  if (message.cmd === 'exit') {
    await contender?.close().catch(() => {});
    counter?.disconnect();
    process.exit(0);
  }
  try {
    const handler = handlers[message.cmd];
    if (!handler) throw new Error(`unknown command ${message.cmd}`);
    const result = await handler(message.args);
    process.send!({ id: message.id, ok: true, result });
  } catch (error) {
    process.send!({ id: message.id, ok: false, error: (error as Error).stack ?? String(error) });
  }
});

process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
