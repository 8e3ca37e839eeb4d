/**
 * A test's server process that speaks JSON lines: the test writes commands to its stdin, it answers each on
 * stdout with a line carrying the command's `id`, and reports what happens meanwhile as other lines (events).
 * It says `{ "ready": true }` once it can take commands, and exits on `{ "exit": true }`. The fixture runs as
 * TypeScript (`node --conditions=@flight/source --import tsx`), so `@flight/*` resolve to their sources.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface LineProcess<Reply> {
  readonly child: ChildProcess;
  /** Sends `command` with a new `id` and resolves with the reply line that carries it. */
  request(command: Record<string, unknown>): Promise<Reply>;
  /** Asks it to exit (`{ exit: true }`) and resolves once it did; at once when it is gone already. */
  stop(): Promise<void>;
}

export interface LineProcessOptions {
  /** Variables added to the test's environment. */
  env?: Record<string, string>;
  /** Where the fixture runs (where `tsx` and its imports resolve). */
  cwd: string;
  /** Every line that is neither `ready` nor a reply. */
  onEvent?: (message: Record<string, unknown>) => void;
}

/** Starts `fixture` (a TypeScript file) and resolves once it said it is ready; rejects when it exits first. */
export async function startLineProcess<Reply>(fixture: string, options: LineProcessOptions): Promise<LineProcess<Reply>> {
  const child = spawn(process.execPath, ['--conditions=@flight/source', '--import', 'tsx', fixture], {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const pending = new Map<number, (reply: Reply) => void>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (message.ready === true) ready();
    else if (typeof message.id === 'number' && pending.has(message.id)) pending.get(message.id)!(message as Reply);
    else options.onEvent?.(message);
  });
  const exited = once(child, 'exit');
  await Promise.race([isReady, exited.then(() => Promise.reject(new Error(`${fixture} exited before it was ready`)))]);
  let seq = 0;
  return {
    child,
    request: (command) =>
      new Promise((resolve) => {
        const id = ++seq;
        pending.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.write(`${JSON.stringify({ exit: true })}\n`);
      await exited;
    },
  };
}
