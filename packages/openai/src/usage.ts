/** The token usage an answer reports, whichever API gave it (chat, responses, embeddings; streamed or not). */

export interface TokenUsage {
  input: number;
  output: number;
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Usage of an answer object (a completion, a response, an embedding list), or undefined when it has none. */
export function usageOf(answer: unknown): TokenUsage | undefined {
  const usage = (answer as { usage?: Record<string, unknown> | null } | null)?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  // Chat and embeddings say prompt/completion tokens; the Responses API says input/output tokens.
  return { input: count(usage.prompt_tokens ?? usage.input_tokens), output: count(usage.completion_tokens ?? usage.output_tokens) };
}

/** Usage a streamed event carries: a chat chunk's (`stream_options.include_usage`), or `response.completed`'s. */
export function usageOfEvent(event: unknown): TokenUsage | undefined {
  const e = event as { type?: string; response?: unknown } | null;
  if (e?.type === 'response.completed') return usageOf(e.response);
  return usageOf(event);
}
