/**
 * The payload of a streamed run's progress notice (see lua/streamAppend.lua) and the window of the latest
 * entries a process received through such notices, so a reader waiting after an id it already holds
 * gets the next entries from memory instead of reading the stream.
 */
import type { StreamEntry } from '@flight/core/adapter';

export interface Progress {
  /** The stream's last entry id after the append. */
  lastId: string;
  /** When the notice carries the appended entries: the id right before them ('' for a stream's first). */
  before?: string;
  entries?: StreamEntry[];
}

/** Parses `<last id>` or `<last id> <id before> (<id> <bytes> <chunk>)+`; undefined when malformed. */
export function parseProgress(payload: string): Progress | undefined {
  const a = payload.indexOf(' ');
  if (a < 0) return payload === '' ? undefined : { lastId: payload };
  const b = payload.indexOf(' ', a + 1);
  if (b < 0) return undefined;
  const lastId = payload.slice(0, a);
  const before = payload.slice(a + 1, b);
  // Chunk lengths are in bytes: walk the UTF-8 form.
  const bytes = Buffer.from(payload.slice(b + 1), 'utf8');
  const entries: StreamEntry[] = [];
  let at = 0;
  while (at < bytes.length) {
    const idEnd = bytes.indexOf(0x20, at);
    const lenEnd = idEnd < 0 ? -1 : bytes.indexOf(0x20, idEnd + 1);
    if (lenEnd < 0) return undefined;
    const id = bytes.toString('latin1', at, idEnd);
    const length = Number(bytes.toString('latin1', idEnd + 1, lenEnd));
    const end = lenEnd + 1 + length;
    if (!Number.isSafeInteger(length) || end > bytes.length) return undefined;
    entries.push({ id, chunk: bytes.toString('utf8', lenEnd + 1, end) });
    at = end + 1;
  }
  if (entries.length === 0 || entries[entries.length - 1]!.id !== lastId) return undefined;
  return { lastId, before: before === '-' ? '' : before, entries };
}

/** Most entries a window keeps, and most characters of chunks (the oldest go first). */
const WINDOW_ENTRIES = 512;
const WINDOW_CHARS = 256 * 1024;

/** The latest entries of one run received through notices, contiguous, and the id right before them. */
export class RecentEntries {
  private before = '';
  private entries: StreamEntry[] = [];
  private chars = 0;

  /** Adds a notice's entries; a gap (a notice missed) starts the window over from them. */
  add(before: string, entries: readonly StreamEntry[]): void {
    const last = this.entries.length > 0 ? this.entries[this.entries.length - 1]!.id : undefined;
    if (last !== before) this.restart(before);
    for (const entry of entries) {
      this.entries.push(entry);
      this.chars += entry.chunk.length;
    }
    let drop = 0;
    while (drop < this.entries.length && (this.entries.length - drop > WINDOW_ENTRIES || this.chars > WINDOW_CHARS)) {
      this.chars -= this.entries[drop]!.chunk.length;
      drop++;
    }
    if (drop > 0) {
      this.before = this.entries[drop - 1]!.id;
      this.entries = this.entries.slice(drop);
    }
  }

  /** The entries right after `id`, when the window holds what follows it; [] otherwise. */
  following(id: string): StreamEntry[] {
    if (this.entries.length === 0) return [];
    if (id === this.before) return this.entries.slice();
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i]!.id === id) return this.entries.slice(i + 1);
    return [];
  }

  clear(): void {
    this.restart('');
  }

  private restart(before: string): void {
    this.before = before;
    this.entries = [];
    this.chars = 0;
  }
}
