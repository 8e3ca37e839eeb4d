/**
 * Options of `createSingleFlight`, documented with their defaults and resolved once.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createLruReplayCache } from '../cache/lru-replay-cache.js';
import { createEnvelopeCodec } from '../codec/envelope-codec.js';
import { FlightValidationError } from '../errors.js';
import { createMemoryCoordinator } from '../memory/memory-coordinator.js';
import { createMemorySessionLock } from '../memory/memory-session-lock.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { ResultCodec } from '../ports/codec.js';
import type { FlightCoordinator } from '../ports/coordinator.js';
import { silentLogger, type FlightLogger } from '../ports/logger.js';
import type { ReplayCache } from '../ports/replay-cache.js';
import type { SessionLock } from '../ports/session-lock.js';
import type { StagePolicyInput } from '../policy/stage-policy.js';

/** `distributed`: coordinate through the coordinator only; `local`: in-process only; `hybrid`: distributed, falling back to local when coordination fails. */
export type FlightMode = 'distributed' | 'local' | 'hybrid';
export const FLIGHT_MODES: readonly FlightMode[] = ['distributed', 'local', 'hybrid'];

export interface SingleFlightOptions {
  /** Where flights are coordinated. @default an in-memory coordinator (one process) */
  coordinator?: FlightCoordinator;
  /** @default 'hybrid' */
  mode?: FlightMode;
  /** This node's id, recorded as the owner. @default `${hostname}-${pid}-${random}` */
  nodeId?: string;
  /** Policies per stage; unknown stages use `defaults`. */
  stages?: Record<string, StagePolicyInput>;
  /** Policy fields shared by every stage. */
  defaults?: StagePolicyInput;
  /** @default the envelope codec (JSON stored as is, deflate + base64 above 8 KiB, CRC-32 checksum) */
  codec?: ResultCodec;
  /** Node-local L1 replay cache. @default an LRU of 10,000 entries and 64 MiB */
  replayCache?: ReplayCache;
  /**
   * Local mode and the hybrid fallback: pass each value through the codec (encode + decode) although it
   * never leaves the process, so callers get the JSON shape distributed callers get and `maxResultBytes`
   * applies. Off, the supplier's value itself is deep-frozen and shared. @default false
   */
  encodeLocalResults?: boolean;
  /** Lock used by stages with `sessionLock.enabled`. @default an in-process lock */
  sessionLock?: SessionLock;
  /** @default the system clock */
  clock?: Clock;
  /** pino-compatible logger. @default silent */
  logger?: FlightLogger;
  /** After a coordination failure, hybrid mode goes straight to the local fallback for this long, then probes again. @default 1000 */
  fallbackCooldownMs?: number;
  /**
   * Report each `execute` as a span and count it through `@opentelemetry/api` (an optional peer
   * dependency: without it installed, or without an SDK registered, nothing is reported). See the README
   * section "Tracing and metrics". @default true
   */
  telemetry?: boolean;
}

export interface ResolvedOptions {
  coordinator: FlightCoordinator;
  ownsCoordinator: boolean;
  mode: FlightMode;
  nodeId: string;
  stages: Record<string, StagePolicyInput>;
  defaults: StagePolicyInput;
  codec: ResultCodec;
  /** True when `codec` is the default envelope codec on JSON: every value it decodes is fresh from `JSON.parse`. */
  decodesFreshJson: boolean;
  replayCache: ReplayCache;
  encodeLocalResults: boolean;
  sessionLock: SessionLock;
  localSessionLock: SessionLock;
  clock: Clock;
  logger: FlightLogger;
  fallbackCooldownMs: number;
  telemetry: boolean;
}

export function resolveOptions(options: SingleFlightOptions = {}): ResolvedOptions {
  const mode = options.mode ?? 'hybrid';
  if (!FLIGHT_MODES.includes(mode)) throw new FlightValidationError(`mode must be one of ${FLIGHT_MODES.join(', ')}, got ${mode}`);
  const clock = options.clock ?? systemClock;
  const localSessionLock = createMemorySessionLock({ clock });
  return {
    coordinator: options.coordinator ?? createMemoryCoordinator({ clock }),
    ownsCoordinator: !options.coordinator,
    mode,
    nodeId: options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    stages: options.stages ?? {},
    defaults: options.defaults ?? {},
    codec: options.codec ?? createEnvelopeCodec(),
    decodesFreshJson: options.codec === undefined,
    replayCache: options.replayCache ?? createLruReplayCache(),
    encodeLocalResults: options.encodeLocalResults ?? false,
    sessionLock: options.sessionLock ?? localSessionLock,
    localSessionLock,
    clock,
    logger: options.logger ?? silentLogger,
    fallbackCooldownMs: Math.max(0, options.fallbackCooldownMs ?? 1000),
    telemetry: options.telemetry ?? true,
  };
}
