/**
 * Whether a model's stream ended as the API ends one, or was cut: a connection closed cleanly before the
 * last event gives the SDK a stream that simply stops, which must not be stored as the whole answer for
 * every caller. Chat: every choice seen got its `finish_reason`. Responses: a terminal event
 * (`response.completed`, `response.incomplete`, `response.failed`) arrived.
 */
import type { CoalescedApi } from './apis.js';

const RESPONSE_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

type Choice = { index?: unknown; finish_reason?: unknown };

export class StreamEnd {
  /** Chat: choices that started, and those that finished. */
  private readonly open = new Set<unknown>();
  private readonly finished = new Set<unknown>();
  private terminal = false;

  constructor(private readonly api: CoalescedApi) {}

  note(event: unknown): void {
    const e = event as { type?: unknown; choices?: unknown } | null;
    if (this.api === 'responses') {
      if (typeof e?.type === 'string' && RESPONSE_ENDS.has(e.type)) this.terminal = true;
      return;
    }
    if (!Array.isArray(e?.choices)) return;
    for (const choice of e.choices as Choice[]) {
      if (choice?.finish_reason) {
        this.open.delete(choice.index);
        this.finished.add(choice.index);
      } else if (!this.finished.has(choice?.index)) this.open.add(choice?.index);
    }
  }

  /** True when the stream reached the API's end. */
  get complete(): boolean {
    return this.api === 'responses' ? this.terminal : this.finished.size > 0 && this.open.size === 0;
  }
}
