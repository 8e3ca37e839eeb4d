import type { FlightLogger } from '../ports/logger.js';
import type { FlightEventMap, FlightEventName } from './types.js';

type Listener<E extends FlightEventName> = (payload: FlightEventMap[E]) => void;

/**
 * A typed event hub whose listeners can never break a flight: a throwing listener is logged and
 * skipped, so events are safe to emit from timers and background tasks.
 */
export class FlightEvents {
  private readonly listeners = new Map<FlightEventName, Set<Listener<any>>>();

  constructor(private readonly logger: FlightLogger) {}

  /** Subscribes; returns the unsubscribe function. */
  on<E extends FlightEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** True when `event` has listeners: callers skip building a payload nobody reads. */
  wants(event: FlightEventName): boolean {
    const set = this.listeners.get(event);
    return set !== undefined && set.size > 0;
  }

  emit<E extends FlightEventName>(event: E, payload: FlightEventMap[E]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of set) {
      try {
        listener(payload);
      } catch (error) {
        this.logger.error({ event, err: error }, 'flight event listener threw');
      }
    }
  }
}
