/**
 * The model client: the official `openai` SDK (6.x, the last major for Node 20) pointed at any
 * OpenAI-compatible endpoint (`baseURL`), wrapped so that its failures carry an HTTP-like `status` and a
 * `failureType`, which the core classifier reads: 429 → OVERLOAD, 5xx → PROVIDER, 400 and other 4xx →
 * VALIDATION, no answer in time → TIMEOUT. The caller's signal (guard timeout, lost lease, cancel) is
 * passed to the SDK and its reason comes back unchanged. `chatStream` is the same call with the SDK's
 * streaming (`stream: true`), yielding the text deltas.
 */
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { FailureType } from '@flight/core/adapter';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatCompletion {
  content: string;
  model: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined;
}

export interface ModelClientOptions {
  /** e.g. `http://127.0.0.1:8090/v1` (env MODEL_BASE_URL). */
  baseUrl: string;
  /** Bearer token (env MODEL_API_KEY); omitted when empty. */
  apiKey?: string | undefined;
  /** Model name (env MODEL_NAME). */
  model: string;
  /** Per-request timeout, on top of the caller's signal. @default 30000 */
  timeoutMs?: number;
  /** Passed through as `temperature`. @default 0 */
  temperature?: number;
  /**
   * Retries of the SDK itself (429, 5xx, connection errors, with its backoff). The stage guard already
   * retries by failure class, so the SDK's own retries are off unless asked for. @default 0
   */
  maxRetries?: number;
}

/** A failed model call, classified for the single-flight failure record. */
export class ModelCallError extends Error {
  readonly status: number | undefined;
  readonly failureType: FailureType;
  readonly code: string;

  constructor(message: string, details: { status?: number | undefined; failureType: FailureType; code: string; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ModelCallError';
    this.status = details.status;
    this.failureType = details.failureType;
    this.code = details.code;
  }
}

function classifyStatus(status: number): { failureType: FailureType; code: string } {
  if (status === 429) return { failureType: 'OVERLOAD', code: 'E_MODEL_OVERLOADED' };
  if (status === 408 || status === 504) return { failureType: 'TIMEOUT', code: 'E_MODEL_TIMEOUT' };
  if (status >= 500) return { failureType: 'PROVIDER', code: `E_MODEL_HTTP_${status}` };
  return { failureType: 'VALIDATION', code: `E_MODEL_HTTP_${status}` };
}

export interface ModelClient {
  readonly model: string;
  chat(messages: ChatMessage[], options?: { signal?: AbortSignal | undefined }): Promise<ChatCompletion>;
  /**
   * The same call streamed (`stream: true`): the answer's text deltas as the model produces them. A
   * stream that ends without a finish reason (connection cut) fails with `E_MODEL_STREAM_CUT` (PROVIDER).
   */
  chatStream(messages: ChatMessage[], options?: { signal?: AbortSignal | undefined }): AsyncIterable<string>;
}

export function createModelClient(options: ModelClientOptions): ModelClient {
  const sdk = new OpenAI({
    baseURL: options.baseUrl,
    // The SDK requires a key; OpenAI-compatible servers without auth ignore it.
    apiKey: options.apiKey || 'unused',
    timeout: options.timeoutMs ?? 30_000,
    maxRetries: options.maxRetries ?? 0,
  });
  return {
    model: options.model,
    async chat(messages, { signal } = {}) {
      let body: OpenAI.Chat.Completions.ChatCompletion;
      try {
        body = await sdk.chat.completions.create(
          { model: options.model, messages, temperature: options.temperature ?? 0 },
          signal ? { signal } : undefined,
        );
      } catch (error) {
        throw modelFailure(error, signal);
      }
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') {
        throw new ModelCallError('model answer has no choices[0].message.content', {
          status: 200,
          failureType: 'PROVIDER',
          code: 'E_MODEL_BAD_ANSWER',
        });
      }
      return { content, model: String(body.model ?? options.model), usage: body.usage ?? undefined };
    },
    async *chatStream(messages, { signal } = {}) {
      let finished = false;
      try {
        const stream = await sdk.chat.completions.create(
          { model: options.model, messages, temperature: options.temperature ?? 0, stream: true },
          signal ? { signal } : undefined,
        );
        for await (const chunk of stream) {
          const choice = chunk.choices?.[0];
          if (typeof choice?.delta?.content === 'string' && choice.delta.content.length > 0) yield choice.delta.content;
          if (choice?.finish_reason) finished = true;
        }
      } catch (error) {
        throw modelFailure(error, signal);
      }
      // The SDK ends the iteration quietly when the signal aborts it: the caller gets the abort reason.
      if (signal?.aborted) throw modelFailure(signal.reason, signal);
      if (!finished) {
        throw new ModelCallError('model stream ended without a finish reason', {
          status: 200,
          failureType: 'PROVIDER',
          code: 'E_MODEL_STREAM_CUT',
        });
      }
    },
  };
}

/** The SDK's errors as typed model failures (the caller's own abort passes through unchanged). */
function modelFailure(error: unknown, callerSignal: AbortSignal | undefined): Error {
  if (error instanceof APIUserAbortError || callerSignal?.aborted) {
    if (callerSignal?.aborted) return callerSignal.reason instanceof Error ? callerSignal.reason : new Error(String(callerSignal.reason));
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelCallError('model did not answer in time', {
      status: 504,
      failureType: 'TIMEOUT',
      code: 'E_MODEL_TIMEOUT',
      cause: error,
    });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const { failureType, code } = classifyStatus(error.status);
    return new ModelCallError(`model answered ${error.status}: ${error.message.slice(0, 300)}`, {
      status: error.status,
      failureType,
      code,
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new ModelCallError('model answered malformed JSON', { failureType: 'PROVIDER', code: 'E_MODEL_BAD_JSON', cause: error });
  }
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return new ModelCallError(`model unreachable: ${(error as Error)?.message ?? error}${cause?.code ? ` (${cause.code})` : ''}`, {
    failureType: 'PROVIDER',
    code: 'E_MODEL_UNREACHABLE',
    cause: error,
  });
}
