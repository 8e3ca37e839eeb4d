/**
 * The ids of a resumable stream's events: `<flight tag>.<run>.<position>`, the same on every node. The
 * tag is a digest of the flight's stage and key, and the key is computed from the resuming request (its
 * identity, host, URL), so an id taken from another user's stream names another flight and is refused.
 */
import { createHash } from 'node:crypto';

export interface EventPosition {
  /** Digest of the flight's stage and key. */
  tag: string;
  /** The run that produced the event: its fencing epoch, or the node-local id of a run without a lease (`FlightContext.run`). */
  epoch: number;
  /** The event's chunk position in that run (the head is 0, the first event 1). */
  index: number;
}

const ID = /^([A-Za-z0-9_-]{16})\.(\d{1,16})\.(\d{1,9})$/;

/** The tag of the flight `stage`/`key`: 16 characters of its SHA-256, base64url. */
export function flightTag(stage: string, key: string): string {
  return createHash('sha256').update(stage).update('\0').update(key).digest('base64url').slice(0, 16);
}

export function formatEventId(position: EventPosition): string {
  return `${position.tag}.${position.epoch}.${position.index}`;
}

/** The position an id names, or undefined when it is not one of ours. */
export function parseEventId(id: string): EventPosition | undefined {
  const match = ID.exec(id.trim());
  if (!match || !Number.isSafeInteger(Number(match[2]))) return undefined;
  return { tag: match[1]!, epoch: Number(match[2]), index: Number(match[3]) };
}
