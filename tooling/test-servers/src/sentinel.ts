/**
 * A local Redis Sentinel topology of a test's own: one primary, one replica and three Sentinels (quorum 2)
 * on free ports, each a `redis-server` process (the Sentinels run `redis-server <conf> --sentinel`), so a
 * test can fail the primary over gracefully (`SENTINEL FAILOVER`) or by SIGKILL, and cut the replica off.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { rawCommand } from './resp';
import { infoField, replicaInSync, until } from './replication';
import { daemonize, kill, onFreePorts, startedServer } from './servers';

const run = promisify(execFile);

export interface SentinelTopology {
  /** The name the Sentinels monitor the primary under. */
  readonly name: string;
  /** The Sentinels' addresses, as clients take them (`sentinels` in ioredis, `sentinelRootNodes` in node-redis). */
  readonly sentinels: { host: string; port: number }[];
  /** The port of the data node the Sentinels name as primary now. */
  primaryPort(): Promise<number>;
  /** The port of the data node that is not the primary now. */
  replicaPort(): Promise<number>;
  /** The pid of the data node on `port`. */
  pidOf(port: number): number;
  /** A graceful failover (`SENTINEL FAILOVER`): resolves once the Sentinels name the other node and it is a writable primary. */
  failover(): Promise<number>;
  /**
   * SIGKILLs the primary (and resumes a replica `cutReplica` stopped): resolves with the new primary's port
   * once the Sentinels promoted it.
   */
  killPrimary(): Promise<number>;
  /**
   * Cuts the replica off, as a partition would: SIGSTOPs it (so it cannot reconnect) and has the primary drop
   * its replication connection, so nothing the primary writes from now on reaches it (a `WAIT` gets 0), until
   * `killPrimary` resumes it without those writes. Resolves with its port.
   */
  cutReplica(): Promise<number>;
  /** Restarts a killed data node as a replica of the primary; resolves once it is in sync. */
  revive(port: number): Promise<void>;
  /** Stops every process of the topology. */
  stop(): Promise<void>;
}

export interface StartSentinelOptions {
  /** Milliseconds of silence before a Sentinel thinks the primary down. @default 1000 */
  downAfterMs?: number;
}

/** Starts a daemonized Sentinel on `port` monitoring `name` at `primary`; resolves its pid once it answers. */
async function startSentinel(dir: string, port: number, name: string, primary: number, downAfterMs: number): Promise<number> {
  const conf = join(dir, `sentinel-${port}.conf`);
  const pidfile = join(dir, `sentinel-${port}.pid`);
  const logfile = join(dir, `sentinel-${port}.log`);
  rmSync(pidfile, { force: true });
  rmSync(logfile, { force: true });
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      'daemonize yes',
      `pidfile ${pidfile}`,
      `logfile ${logfile}`,
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  await run('redis-server', [conf, '--sentinel']);
  return await startedServer(port, 'redis-sentinel', pidfile, logfile);
}

/** Starts the topology and waits until every Sentinel knows the replica and the other Sentinels. */
export async function startSentinelTopology(options: StartSentinelOptions = {}): Promise<SentinelTopology> {
  const name = 'flight';
  const dir = mkdtempSync(join(tmpdir(), 'flight-sentinel-'));
  const pids = new Map<number, number>();
  const sentinelPids: number[] = [];
  const sync = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];
  const stop = async () => {
    await Promise.all([...pids.values(), ...sentinelPids].map((pid) => kill(pid)));
  };
  try {
    /** A data node on a free port; `replicaOf`: its primary's port. */
    const dataNode = (replicaOf?: number) =>
      onFreePorts(1, async ([port]) => {
        const args = replicaOf === undefined ? sync : [...sync, '--replicaof', '127.0.0.1', String(replicaOf)];
        pids.set(port!, await daemonize(dir, port!, 'redis-server', args));
        return port!;
      });
    const primary = await dataNode();
    const replica = await dataNode(primary);
    await replicaInSync(replica);
    const sentinels: { host: string; port: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await onFreePorts(1, async ([port]) => {
        sentinelPids.push(await startSentinel(dir, port!, name, primary, options.downAfterMs ?? 1000));
        return port!;
      });
      sentinels.push({ host: '127.0.0.1', port });
    }
    for (const { port } of sentinels) {
      await until('each sentinel to know the replica and the other sentinels', async () => {
        const replicas = (await rawCommand(port, ['SENTINEL', 'REPLICAS', name])) as unknown[];
        const others = (await rawCommand(port, ['SENTINEL', 'SENTINELS', name])) as unknown[];
        return Array.isArray(replicas) && replicas.length === 1 && Array.isArray(others) && others.length === 2 ? true : undefined;
      });
    }
    let paused: number | undefined;
    const primaryPort = async () => {
      const address = (await rawCommand(sentinels[0]!.port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name])) as string[];
      return Number(address[1]);
    };
    /** Resolves the new primary's port once every Sentinel names a node other than `old` and it accepts writes. */
    const promoted = (old: number) =>
      until(
        'the promotion',
        async () => {
          const named = await Promise.all(
            sentinels.map(async ({ port }) =>
              Number(((await rawCommand(port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name])) as string[])[1]),
            ),
          );
          if (named.some((port) => port === old || port !== named[0])) return undefined;
          const role = infoField(await rawCommand(named[0]!, ['INFO', 'replication']), 'role');
          return role === 'master' ? named[0]! : undefined;
          // A failed election is tried again only after twice the failover timeout (20 s).
        },
        60_000,
      );
    return {
      name,
      sentinels,
      primaryPort,
      async replicaPort() {
        const current = await primaryPort();
        return [...pids.keys()].find((port) => port !== current)!;
      },
      pidOf: (port) => pids.get(port)!,
      async failover() {
        const old = await primaryPort();
        // A Sentinel refuses while an earlier failover is still being wound up (-INPROG): asked again.
        await until('a Sentinel to start the failover', async () =>
          (await rawCommand(sentinels[0]!.port, ['SENTINEL', 'FAILOVER', name])) instanceof Error ? undefined : true,
        );
        return promoted(old);
      },
      async killPrimary() {
        const old = await primaryPort();
        await kill(pids.get(old)!);
        if (paused !== undefined) process.kill(pids.get(paused)!, 'SIGCONT');
        paused = undefined;
        return promoted(old);
      },
      async cutReplica() {
        const current = await primaryPort();
        paused = [...pids.keys()].find((port) => port !== current)!;
        process.kill(pids.get(paused)!, 'SIGSTOP');
        await rawCommand(current, ['CLIENT', 'KILL', 'TYPE', 'replica']);
        await until('the primary to have no replica', async () =>
          infoField(await rawCommand(current, ['INFO', 'replication']), 'connected_slaves') === '0' ? true : undefined,
        );
        return paused;
      },
      async revive(port) {
        const current = await primaryPort();
        pids.set(port, await daemonize(dir, port, 'redis-server', [...sync, '--replicaof', '127.0.0.1', String(current)]));
        await replicaInSync(port);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
