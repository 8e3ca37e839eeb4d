// redlock@5 beta ships types its package.json "exports" does not expose; the part the recipe uses.
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';
  export interface Settings {
    driftFactor: number;
    retryCount: number;
    retryDelay: number;
    retryJitter: number;
    automaticExtensionThreshold: number;
  }
  export interface Lock {
    release(): Promise<unknown>;
  }
  export default class Redlock extends EventEmitter {
    constructor(clients: Iterable<unknown>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    quit(): Promise<void>;
  }
}
