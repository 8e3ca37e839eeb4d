/** Worker processes (Node + tsx) and a tiny request/reply protocol over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { libraryExecArgv } from './library.js';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = join(here, '..');

export class Worker {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;

  constructor(readonly child: ChildProcess) {
    this.ready = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready`)));
      child.on('message', (m: any) => {
        if (m?.ready) return resolve();
        const w = this.waiting.get(m.id);
        if (!w) return;
        this.waiting.delete(m.id);
        if (m.ok) w.resolve(m.result);
        else w.reject(new Error(`worker ${child.pid}: ${m.error}`));
      });
    });
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`worker ${child.pid} exited with ${code}`));
      this.waiting.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  call<T = any>(cmd: string, args: unknown = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, cmd, args });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      this.child.send({ id: 0, cmd: 'exit' });
    } catch {
      /* channel closed */
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Forks `n` workers running src/worker.ts through tsx (on the run's packages, library.ts), with --expose-gc for
 * memory figures; `FLIGHT_BENCH_TRACE_GC=1` adds --trace-gc (each collection and its pause on stdout), and
 * `FLIGHT_BENCH_WORKER_ARGS` any other Node flags (`--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them).
 */
export async function startWorkers(n: number): Promise<Worker[]> {
  const workers = Array.from({ length: n }, () => {
    const child = fork(join(here, 'worker.ts'), [], {
      cwd: benchDir,
      execArgv: [
        ...(process.env.FLIGHT_BENCH_TRACE_GC ? ['--trace-gc'] : []),
        ...(process.env.FLIGHT_BENCH_WORKER_ARGS?.split(/\s+/).filter(Boolean) ?? []),
        '--expose-gc',
        ...libraryExecArgv(),
        '--import',
        'tsx',
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Worker(child);
  });
  await Promise.all(workers.map((w) => w.ready));
  return workers;
}

export async function stopWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}
