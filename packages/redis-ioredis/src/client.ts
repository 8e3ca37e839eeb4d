/** The part of an ioredis `Redis` or `Cluster` client used here (structural: ioredis 5 and 6 both fit). */
export interface IoredisClient {
  call(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
  /** `call` with bulk replies as Buffers (ioredis 5 and 6 both have it). */
  callBuffer(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
  duplicate(...overrides: any[]): IoredisClient;
  ssubscribe(...channels: string[]): Promise<unknown>;
  sunsubscribe(...channels: string[]): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  readonly isCluster?: boolean;
  readonly options?: object;
}

/** The socket of a standalone ioredis client, as far as the driver uses it. */
export interface CorkableStream {
  readonly writable?: boolean;
  cork(): void;
  uncork(): void;
}

/** The slot table and masters of an ioredis `Cluster`, as far as the driver uses them. */
export interface ClusterShape {
  slots: string[][];
  nodes(role: 'master'): { options: { host?: string; port?: number }; call: IoredisClient['call'] }[];
}
