/**
 * Options of `createSingleFlight`, documented with their defaults and resolved once.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createLruReplayCache } from '../cache/lru-replay-cache.js';
import { createEnvelopeCodec } from '../codec/envelope-codec.js';
import { assertKnownOptions } from '../config/known-options.js';
import { FlightConfigurationError } from '../errors.js';
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
  /**
   * Where flights are coordinated. @default an in-memory coordinator (one process) — only when `mode` is
   * not set: an explicit `'distributed'` or `'hybrid'` without a coordinator is a `FlightConfigurationError`.
   */
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

const OPTIONS: readonly (keyof SingleFlightOptions)[] = [
  'coordinator',
  'mode',
  'nodeId',
  'stages',
  'defaults',
  'codec',
  'replayCache',
  'encodeLocalResults',
  'sessionLock',
  'clock',
  'logger',
  'fallbackCooldownMs',
  'telemetry',
];

/** The methods a coordinator has (a Redis client or its options passed as `coordinator` has not). */
const COORDINATOR_METHODS = [
  'acquire',
  'markRunning',
  'heartbeat',
  'complete',
  'fail',
  'cancel',
  'expire',
  'forget',
  'waitForTerminal',
  'close',
];

/**
 * The coordinator: the one given, checked; or, when none is, an in-memory one for a single process — unless
 * `mode` asks for coordination across processes, which an in-memory coordinator cannot give.
 */
function coordinatorOf(options: SingleFlightOptions, mode: FlightMode, clock: Clock): FlightCoordinator {
  const { coordinator } = options;
  if (coordinator === undefined) {
    if (options.mode === 'distributed' || options.mode === 'hybrid') {
      throw new FlightConfigurationError(
        `createSingleFlight: mode '${mode}' coordinates across processes and needs a coordinator; pass one (createIoredisCoordinator or createNodeRedisCoordinator), or use mode 'local'`,
        { context: { option: 'coordinator', fix: 'coordinator' } },
      );
    }
    return createMemoryCoordinator({ clock });
  }
  const missing = COORDINATOR_METHODS.filter((name) => typeof (coordinator as unknown as Record<string, unknown>)?.[name] !== 'function');
  if (missing.length > 0) {
    throw new FlightConfigurationError(
      `createSingleFlight: coordinator is not a flight coordinator (no ${missing.join(', ')}); pass what createIoredisCoordinator or createNodeRedisCoordinator returns, not a Redis client`,
      { context: { option: 'coordinator' } },
    );
  }
  return coordinator;
}

export function resolveOptions(options: SingleFlightOptions = {}): ResolvedOptions {
  assertKnownOptions('createSingleFlight', options, OPTIONS);
  const mode = options.mode ?? 'hybrid';
  if (!FLIGHT_MODES.includes(mode)) {
    throw new FlightConfigurationError(`createSingleFlight: mode must be one of ${FLIGHT_MODES.join(', ')}, got ${String(mode)}`, {
      context: { option: 'mode' },
    });
  }
  const clock = options.clock ?? systemClock;
  const localSessionLock = createMemorySessionLock({ clock });
  return {
    coordinator: coordinatorOf(options, mode, clock),
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
