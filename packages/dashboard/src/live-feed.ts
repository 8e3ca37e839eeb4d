/**
 * The page's server-sent events: one `state` event per refresh to every open page. The state is built
 * once per refresh whoever watches, and only while someone does; a page that cannot keep up (its socket
 * buffer full) skips refreshes instead of buffering them.
 */
import type { ServerResponse } from 'node:http';
import type { DashboardState } from './state.js';

const BACKLOG_LIMIT = 1 << 20;

export class LiveFeed {
  private readonly pages = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private building = false;

  constructor(
    private readonly build: () => Promise<DashboardState>,
    private readonly refreshMs: number,
  ) {}

  /** Streams the state to `res` until the page goes away. */
  open(res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${Math.max(1000, this.refreshMs)}\n\n`);
    this.pages.add(res);
    res.on('close', () => {
      this.pages.delete(res);
      if (this.pages.size === 0) this.stop();
    });
    if (!this.timer) {
      this.timer = setInterval(() => this.refresh(), this.refreshMs);
      this.timer.unref();
    }
    this.refresh();
  }

  close(): void {
    this.stop();
    for (const res of this.pages) res.end();
    this.pages.clear();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private refresh(): void {
    if (this.building || this.pages.size === 0) return;
    this.building = true;
    this.build()
      .then((state) => {
        const frame = `event: state\ndata: ${JSON.stringify(state)}\n\n`;
        for (const res of this.pages) if (res.writableLength < BACKLOG_LIMIT) res.write(frame);
      })
      .catch(() => {
        // Building the state does not throw (see state.ts); a page write that fails closes its socket.
      })
      .finally(() => {
        this.building = false;
      });
  }
}
