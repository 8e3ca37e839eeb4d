/**
 * How the coordinator runs a flight script: the version check on first use, the command deadline, one
 * error mapping, the reply decoded, and `WAIT` after an owner write when `waitReplicas` asks for it (in strict
 * mode, a write fewer replicas acknowledged throws `UnacknowledgedWrite`).
 */
import type { Fence, FlightRef, WriteReply } from '@flight/core/adapter';
import type { RedisDriver, ScriptArg, ScriptRunner } from '../driver';
import { toFlightRedisError, withDeadline } from '../errors';
import { unacknowledged } from './unacknowledged-write';
import type { RunKeys } from '../flight-keys-of';
import type { LuaScriptName } from './lua.generated';
import type { ResolvedRedisOptions } from '../options';
import { decodeReply, decodeWriteReply, type ScriptReply } from './reply';
import { runScript, scriptKeys } from './scripts';
import { createVersionCheck } from '../version-check';

export interface ScriptCalls {
  /** Runs any Redis call with the version check, the deadline and the error mapping. */
  call<T>(operation: string, ref: FlightRef | undefined, run: () => Promise<T>): Promise<T>;
  /** Whether the server passed the version check (then `sent` may go out without it). */
  readonly checked: boolean;
  /** A command already sent (after the version check), under the deadline and the error mapping. */
  sent<T>(operation: string, ref: FlightRef, command: Promise<T>): Promise<T>;
  /**
   * Runs flight script `name` on `ref`'s keys; `ownerWrite`: followed by `WAIT` when `waitReplicas` is set.
   * `via`: the connection to run it on (the command connection unless a re-read rides with a subscription).
   */
  script(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly ScriptArg[],
    ownerWrite: boolean,
    keys?: RunKeys,
    via?: ScriptRunner,
  ): Promise<ScriptReply>;
  /**
   * Runs owner write `name` (markRunning, heartbeat, complete, fail) on `fence`'s keys: its reply as core's
   * `WriteReply` (an accepted write's record decoded on first read) and the record's `updatedAt`.
   */
  write(name: LuaScriptName, fence: Fence, args: readonly ScriptArg[], ownerWrite: boolean, keys: RunKeys): Promise<OwnerWrite>;
  /** The `read` script: the record, and its result when `withResult`. */
  read(ref: FlightRef, withResult: boolean, via?: ScriptRunner): Promise<ScriptReply>;
  /** The `now` argument of every script: the test clock's time, or '' for the Redis server clock. */
  nowArg(): string;
  /** Arguments of an owner write: now, the flight's channel, the fence. */
  fenceArgs(fence: Fence, keys: RunKeys): string[];
}

/** An owner write's reply, and the `updatedAt` of the record it wrote (undefined when it was refused). */
export interface OwnerWrite {
  reply: WriteReply;
  updatedAt: number | undefined;
}

export function createScriptCalls(driver: RedisDriver, opts: ResolvedRedisOptions, keysOf: (ref: FlightRef) => RunKeys): ScriptCalls {
  const version = createVersionCheck(driver);
  const { clock, commandTimeoutMs, waitReplicas } = opts;

  const nowArg = () => (clock ? String(Math.trunc(clock())) : '');

  async function call<T>(operation: string, ref: FlightRef | undefined, run: () => Promise<T>): Promise<T> {
    try {
      if (!version.passed) await withDeadline(version.run(), commandTimeoutMs);
      return await withDeadline(run(), commandTimeoutMs);
    } catch (error) {
      throw toFlightRedisError(error, operation, ref ? { stage: ref.stage, key: ref.key } : {});
    }
  }

  function script(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly ScriptArg[],
    ownerWrite: boolean,
    keys: RunKeys = keysOf(ref),
    via: ScriptRunner = driver,
  ): Promise<ScriptReply> {
    return run(name, ref, args, ownerWrite, keys, via, decodeReply);
  }

  /** Runs a script and decodes its reply with `decode`. */
  function run<R>(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly ScriptArg[],
    ownerWrite: boolean,
    keys: RunKeys,
    via: ScriptRunner,
    decode: (raw: unknown, ref: FlightRef) => R,
  ): Promise<R> {
    if (version.passed && !(ownerWrite && waitReplicas)) {
      // The common case in one promise chain: no async frames around the command.
      return withDeadline(runScript(via, name, scriptKeys(name, keys, args), args), commandTimeoutMs).then(
        (raw) => decode(raw, ref), // throws FlightCoordinationError only, which the mapping keeps as it is
        (error: unknown) => {
          throw toFlightRedisError(error, name, { stage: ref.stage, key: ref.key });
        },
      );
    }
    const waitsForReplicas = ownerWrite && waitReplicas !== undefined && driver.waitReplicas !== undefined;
    if (waitsForReplicas && waitReplicas.strict) return strictWrite(name, ref, args, keys, via, decode);
    return call(name, ref, async () => {
      const reply = decode(await runScript(via, name, scriptKeys(name, keys, args), args), ref);
      if (waitsForReplicas) await driver.waitReplicas!(keys.meta, waitReplicas!.replicas, waitReplicas!.timeoutMs);
      return reply;
    });
  }

  /**
   * An owner write in strict mode: the script under its deadline, then `WAIT` under one of its own. Once the
   * script answered, the write is known to have landed; a `WAIT` that fails or does not answer (the primary
   * died or the connection dropped meanwhile) tells nothing of replicas, so it counts as no acknowledgement:
   * `UnacknowledgedWrite`, whose caller asks again, rather than an outcome-unknown error for a known write.
   */
  async function strictWrite<R>(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly ScriptArg[],
    keys: RunKeys,
    via: ScriptRunner,
    decode: (raw: unknown, ref: FlightRef) => R,
  ): Promise<R> {
    const wait = waitReplicas!;
    const reply = await call(name, ref, async () => decode(await runScript(via, name, scriptKeys(name, keys, args), args), ref));
    const acknowledged = await withDeadline(driver.waitReplicas!(keys.meta, wait.replicas, wait.timeoutMs), commandTimeoutMs).catch(
      () => 0,
    );
    const error = acknowledged < wait.replicas ? unacknowledged(name, ref, reply, acknowledged, wait.replicas) : undefined;
    if (error) throw error;
    return reply;
  }

  return {
    call,
    get checked() {
      return version.passed;
    },
    sent: (operation, ref, command) =>
      withDeadline(command, commandTimeoutMs).catch((error: unknown) => {
        throw toFlightRedisError(error, operation, { stage: ref.stage, key: ref.key });
      }),
    script,
    write: (name, fence, args, ownerWrite, keys) => run(name, fence, args, ownerWrite, keys, driver, decodeWriteReply),
    nowArg,
    read: (ref, withResult, via) => script('read', ref, [nowArg(), withResult ? '1' : '0'], false, undefined, via),
    fenceArgs: (fence, keys) => [nowArg(), keys.channel, fence.ownerId, fence.ownerToken, String(fence.epoch)],
  };
}
