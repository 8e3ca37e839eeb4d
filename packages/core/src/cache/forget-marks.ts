/**
 * Which L1 fills are too old to land. A value read before a forget (or a cluster-wide invalidation) of its
 * flight must never enter L1 after it: the read and the forget may come back in the same packet, and the
 * read's continuation may run last. Every call takes a `since` mark when it starts; a forget of the flight
 * stamps it with a newer mark; a fill whose call started before the latest stamp of its flight is refused.
 *
 * Stamps are kept for the `maxFlights` most recently forgotten flights. When an older one is dropped, its
 * mark becomes the floor: a fill from a call started before the floor is refused for every flight, which
 * costs a few L1 fills and never lets a stale one through.
 */
export class ForgetMarks {
  private mark = 0;
  private floor = 0;
  private readonly stamps = new Map<string, number>();

  constructor(private readonly maxFlights = 10_000) {}

  /** The mark a call takes when it starts. */
  now(): number {
    return this.mark;
  }

  /** A new mark: calls that start from now on have one at or above it, calls started before one below. */
  next(): number {
    return ++this.mark;
  }

  /** Records a forget of `id`: fills of calls started before now are refused from here on. */
  forgot(id: string): void {
    const mark = this.next();
    this.stamps.delete(id);
    this.stamps.set(id, mark);
    if (this.stamps.size > this.maxFlights) {
      const [oldest, stamp] = this.stamps.entries().next().value as [string, number];
      this.stamps.delete(oldest);
      this.floor = stamp;
    }
  }

  /** True when a value read by a call that started at `since` may still be put in L1 for `id`. */
  mayFill(id: string, since: number): boolean {
    if (since < this.floor) return false;
    const stamp = this.stamps.get(id);
    return stamp === undefined || since >= stamp;
  }
}
