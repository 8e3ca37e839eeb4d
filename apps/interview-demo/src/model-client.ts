/**
 * A minimal OpenAI-compatible chat-completions client (`POST {baseUrl}/chat/completions`).
 *
 * Failures carry an HTTP-like `status` and a `failureType`, which the core classifier reads:
 * 429 → OVERLOAD, 5xx → PROVIDER, 400 and other 4xx → VALIDATION, no answer in time → TIMEOUT.
 */
import type { FailureType } from '@flight/core';

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
}

export function createModelClient(options: ModelClientOptions): ModelClient {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    model: options.model,
    async chat(messages, { signal } = {}) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: options.model, messages, temperature: options.temperature ?? 0 }),
          signal: combined,
        });
      } catch (error) {
        throw fetchFailure(error, timeout.aborted, signal);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw fetchFailure(error, timeout.aborted, signal);
      }
      if (!response.ok) {
        const { failureType, code } = classifyStatus(response.status);
        throw new ModelCallError(`model answered ${response.status}: ${text.slice(0, 300)}`, {
          status: response.status,
          failureType,
          code,
        });
      }
      let body: any;
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw new ModelCallError('model answered malformed JSON', { status: response.status, failureType: 'PROVIDER', code: 'E_MODEL_BAD_JSON', cause: error });
      }
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') {
        throw new ModelCallError('model answer has no choices[0].message.content', {
          status: response.status,
          failureType: 'PROVIDER',
          code: 'E_MODEL_BAD_ANSWER',
        });
      }
      return { content, model: String(body.model ?? options.model), usage: body.usage };
    },
  };
}

function fetchFailure(error: unknown, timedOut: boolean, callerSignal: AbortSignal | undefined): Error {
  if (timedOut) return new ModelCallError('model did not answer in time', { status: 504, failureType: 'TIMEOUT', code: 'E_MODEL_TIMEOUT', cause: error });
  // The caller's signal (guard timeout, lost lease, cancel): pass its reason through unchanged.
  if (callerSignal?.aborted) return callerSignal.reason instanceof Error ? callerSignal.reason : new Error(String(callerSignal.reason));
  const code = (error as any)?.cause?.code ?? (error as any)?.code;
  return new ModelCallError(`model unreachable: ${(error as Error)?.message ?? error}${code ? ` (${code})` : ''}`, {
    failureType: 'PROVIDER',
    code: 'E_MODEL_UNREACHABLE',
    cause: error,
  });
}
