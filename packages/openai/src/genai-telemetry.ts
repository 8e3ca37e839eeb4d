/**
 * What a wrapped client reports through OpenTelemetry (an optional peer: without `@opentelemetry/api`
 * nothing is reported), following the GenAI semantic conventions:
 *
 * - a CLIENT span per call, `{operation} {model}` (`chat gpt-4o`), with `gen_ai.*` request, response and
 *   usage attributes and the caller's `flight.role` (the flight's own `flight.execute` span is its child);
 * - `gen_ai.client.token.usage`: the tokens spent, recorded once per upstream call (by its owner);
 * - `flight.openai.tokens.saved` and `flight.openai.calls`: the tokens and calls every other caller got
 *   without spending them, per model and stage; `flight.openai.calls` counts the owners' and the unshared
 *   calls too, by `flight.role` (`owner`, `follower`, `replay`, `l1`, `unshared`).
 */
import type { FlightRole } from '@flight/core';
import { resolvedOtelApi } from '@flight/core/adapter';
import type { ApiSpec } from './apis.js';
import type { TokenUsage } from './usage.js';

/** The names of the metrics this package records. */
export const OPENAI_METRICS = {
  tokenUsage: 'gen_ai.client.token.usage',
  tokensSaved: 'flight.openai.tokens.saved',
  calls: 'flight.openai.calls',
} as const;

const INSTRUMENTATION = '@flight/openai';

/** The API module's type: used inside this package only, so the published declarations never name it. */
type OtelApi = typeof import('@opentelemetry/api');

type Instruments = {
  api: OtelApi;
  tokenUsage: ReturnType<ReturnType<OtelApi['metrics']['getMeter']>['createHistogram']>;
  tokensSaved: ReturnType<ReturnType<OtelApi['metrics']['getMeter']>['createCounter']>;
  calls: ReturnType<ReturnType<OtelApi['metrics']['getMeter']>['createCounter']>;
};

let instruments: Instruments | null | undefined;

function instrumentsOf(): Instruments | null {
  if (instruments !== undefined) return instruments;
  const api = resolvedOtelApi() as OtelApi | undefined;
  if (!api) return (instruments = null);
  const meter = api.metrics.getMeter(INSTRUMENTATION);
  return (instruments = {
    api,
    tokenUsage: meter.createHistogram(OPENAI_METRICS.tokenUsage, { description: 'Tokens spent by model calls', unit: '{token}' }),
    tokensSaved: meter.createCounter(OPENAI_METRICS.tokensSaved, {
      description: 'Tokens a caller received from another caller’s model call instead of spending them',
      unit: '{token}',
    }),
    calls: meter.createCounter(OPENAI_METRICS.calls, { description: 'Calls of the wrapped client, by flight role', unit: '{call}' }),
  });
}

const SAMPLING_ATTRIBUTES: Record<string, string> = {
  temperature: 'gen_ai.request.temperature',
  top_p: 'gen_ai.request.top_p',
  seed: 'gen_ai.request.seed',
  max_tokens: 'gen_ai.request.max_tokens',
  max_completion_tokens: 'gen_ai.request.max_tokens',
  max_output_tokens: 'gen_ai.request.max_tokens',
};

/** One call as it is reported: started before the flight, ended with its outcome. */
export interface CallReport {
  /** Runs `work` with this call's span active (the flight's span becomes its child). */
  within<T>(work: () => Promise<T>): Promise<T>;
  /** The call got its answer; `spent`: this call's own run asked the model (else its usage was saved). */
  answered(
    outcome: { role: FlightRole; spent: boolean },
    answer: { model?: unknown; id?: unknown } | undefined,
    usage: TokenUsage | undefined,
  ): void;
  failed(error: unknown): void;
  /** The caller left (a stream not read to its end): the span ends as it is. */
  left(): void;
}

const NO_REPORT: CallReport = { within: (work) => work(), answered: () => undefined, failed: () => undefined, left: () => undefined };

/** The attributes every span and metric of a call carries. */
function callAttributes(spec: ApiSpec, body: Record<string, unknown>) {
  return { 'gen_ai.operation.name': spec.operation, 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': String(body.model ?? '') };
}

/** Counts a call that was not coalesced (it samples freely, or its body is not plain JSON). */
export function reportUnshared(spec: ApiSpec, stage: string, body: Record<string, unknown>): void {
  instrumentsOf()?.calls.add(1, { ...callAttributes(spec, body), 'flight.stage': stage, 'flight.role': 'unshared' });
}

export function reportCall(spec: ApiSpec, stage: string, body: Record<string, unknown>): CallReport {
  const otel = instrumentsOf();
  if (!otel) return NO_REPORT;
  const { api } = otel;
  const common = callAttributes(spec, body);
  const model = common['gen_ai.request.model'];
  const span = api.trace.getTracer(INSTRUMENTATION).startSpan(`${spec.operation} ${model}`, {
    kind: api.SpanKind.CLIENT,
    attributes: { ...common, 'gen_ai.system': 'openai', 'flight.stage': stage },
  });
  for (const [field, attribute] of Object.entries(SAMPLING_ATTRIBUTES))
    if (typeof body[field] === 'number') span.setAttribute(attribute, body[field] as number);
  let ended = false;
  /** Ends the span once, after `finish` described how the call ended. */
  const end = (finish: () => void) => {
    if (ended) return;
    ended = true;
    finish();
    span.end();
  };
  return {
    within: (work) => api.context.with(api.trace.setSpan(api.context.active(), span), work),
    answered: ({ role, spent }, answer, usage) =>
      end(() => {
        const responseModel = typeof answer?.model === 'string' ? answer.model : model;
        span.setAttribute('flight.role', role);
        span.setAttribute('gen_ai.response.model', responseModel);
        if (typeof answer?.id === 'string') span.setAttribute('gen_ai.response.id', answer.id);
        const metric = { ...common, 'gen_ai.response.model': responseModel, 'flight.stage': stage };
        otel.calls.add(1, { ...metric, 'flight.role': role });
        if (usage) {
          span.setAttribute('gen_ai.usage.input_tokens', usage.input);
          span.setAttribute('gen_ai.usage.output_tokens', usage.output);
          for (const [type, tokens] of [
            ['input', usage.input],
            ['output', usage.output],
          ] as const) {
            if (spent) otel.tokenUsage.record(tokens, { ...metric, 'gen_ai.token.type': type });
            else otel.tokensSaved.add(tokens, { ...metric, 'gen_ai.token.type': type });
          }
        }
      }),
    failed: (error) =>
      end(() => {
        span.setAttribute('error.type', (error as Error)?.constructor?.name ?? 'Error');
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: String((error as Error)?.message ?? error) });
      }),
    left: () => end(() => span.setAttribute('flight.left', true)),
  };
}
