/** A Redis driver whose subscriber loses some notices, as a broken connection or a failover would. */
import { isActive } from '@flight/core/adapter';
import { parseNotice, type RedisDriver } from '@flight/redis-scripts';

/**
 * `driver`, except that its subscriber never delivers a flight's terminal notice (completed, failed,
 * abandoned): what a waiter then does is its poll net's. Progress notices and forgets still arrive.
 * `lost` counts the notices dropped.
 */
export function withoutTerminalNotices(driver: RedisDriver): { driver: RedisDriver; lost: () => number } {
  let lost = 0;
  const lossy = new Proxy(driver, {
    get(target, property) {
      if (property === 'createSubscriber') {
        return ((handlers) =>
          target.createSubscriber({
            ...handlers,
            onMessage(channel, message) {
              const notice = parseNotice(message);
              if (notice && !isActive(notice.status)) lost++;
              else handlers.onMessage(channel, message);
            },
          })) satisfies RedisDriver['createSubscriber'];
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { driver: lossy, lost: () => lost };
}
