/**
 * What the middleware reports through OpenTelemetry metrics (an optional peer: without `@opentelemetry/api`
 * nothing is reported). The AI SDK's own telemetry traces each call; these say what sharing saved:
 *
 * - `flight.ai.calls`: calls through the middleware, by `flight.role` (`owner`, `follower`, `replay`, `l1`,
 *   `local`, and `unshared` for a call the sampling policy or its options kept to itself);
 * - `flight.ai.tokens.spent`: the tokens the model spent, once per model call (by its owner);
 * - `flight.ai.tokens.saved`: the tokens every other caller got without spending them;
 *
 * each per `gen_ai.provider.name`, `gen_ai.request.model` and `flight.stage`, tokens by `gen_ai.token.type`
 * (`input`, `output`).
 */
import type { LanguageModelV4Usage } from '@ai-sdk/provider';
import type { FlightRole } from '@flight/core';
import { resolvedOtelApi } from '@flight/core/adapter';

/** The names of the metrics this package records. */
export const AI_SDK_METRICS = {
  calls: 'flight.ai.calls',
  tokensSpent: 'flight.ai.tokens.spent',
  tokensSaved: 'flight.ai.tokens.saved',
} as const;

type OtelApi = typeof import('@opentelemetry/api');
type Counter = ReturnType<ReturnType<OtelApi['metrics']['getMeter']>['createCounter']>;

let instruments: { calls: Counter; spent: Counter; saved: Counter } | null | undefined;

function instrumentsOf() {
  if (instruments !== undefined) return instruments;
  const api = resolvedOtelApi() as OtelApi | undefined;
  if (!api) return (instruments = null);
  const meter = api.metrics.getMeter('@flight/ai-sdk');
  return (instruments = {
    calls: meter.createCounter(AI_SDK_METRICS.calls, { description: 'Model calls through the middleware, by flight role', unit: '{call}' }),
    spent: meter.createCounter(AI_SDK_METRICS.tokensSpent, { description: 'Tokens spent by model calls', unit: '{token}' }),
    saved: meter.createCounter(AI_SDK_METRICS.tokensSaved, {
      description: 'Tokens a caller received from another caller’s model call instead of spending them',
      unit: '{token}',
    }),
  });
}

export interface CallLabels {
  provider: string;
  model: string;
  stage: string;
}

const count = (value: number | undefined) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * One call answered: its role, whether this caller's own run spent the tokens (else they were saved for it),
 * and the usage of the answer (undefined when it reported none).
 */
export function recordCall(
  labels: CallLabels,
  role: FlightRole | 'unshared',
  spent: boolean,
  usage: LanguageModelV4Usage | undefined,
): void {
  const meters = instrumentsOf();
  if (!meters) return;
  const attributes = { 'gen_ai.provider.name': labels.provider, 'gen_ai.request.model': labels.model, 'flight.stage': labels.stage };
  meters.calls.add(1, { ...attributes, 'flight.role': role });
  if (!usage) return;
  const tokens = spent ? meters.spent : meters.saved;
  tokens.add(count(usage.inputTokens?.total), { ...attributes, 'gen_ai.token.type': 'input' });
  tokens.add(count(usage.outputTokens?.total), { ...attributes, 'gen_ai.token.type': 'output' });
}
