/**
 * The model clients: the official `openai` SDK (6.x) pointed at any OpenAI-compatible endpoint
 * (`baseUrl`), one per stage, each wrapped by `@flight/openai` so identical calls of that stage are made
 * once across the cluster (its lease, guard, session lock and L1 are the stage's policy). Each client
 * counts the HTTP calls it really sends to the model — the ground truth of "model calls made here".
 */
import type { SingleFlight } from '@flight/core';
import { withFlights } from '@flight/openai';
import OpenAI from 'openai';
import type { StageName } from './stages.js';

export interface ModelClientOptions {
  /** e.g. `http://127.0.0.1:8090/v1` (env MODEL_BASE_URL). */
  baseUrl: string;
  /** Bearer token (env MODEL_API_KEY); omitted when empty. */
  apiKey?: string | undefined;
  /** Model name (env MODEL_NAME). */
  model: string;
  /** Per-request timeout, on top of the caller's signal. @default 30000 */
  timeoutMs?: number;
  /**
   * Retries of the SDK itself (429, 5xx, connection errors, with its backoff). The stage guard already
   * retries by failure class, so the SDK's own retries are off unless asked for. @default 0
   */
  maxRetries?: number;
}

/** A model call this node sent: its stage (or the report route's) and whether the model answered 2xx. */
export type ModelCallListener = (stage: string, outcome: 'ok' | 'error') => void;

export interface ModelClients {
  readonly model: string;
  /** The stage's client: its chat calls are coalesced across the cluster under the stage's policy. */
  forStage(stage: StageName): OpenAI;
  /** A client of its own for `stage` that coalesces nothing (the report route's response is coalesced by the middleware). */
  plain(stage: string): OpenAI;
}

export function createModelClients(options: ModelClientOptions, flights: SingleFlight, onModelCall: ModelCallListener): ModelClients {
  const sdk = (stage: string) =>
    new OpenAI({
      baseURL: options.baseUrl,
      // The SDK requires a key; OpenAI-compatible servers without auth ignore it.
      apiKey: options.apiKey || 'unused',
      timeout: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 0,
      fetch: counted(stage, onModelCall),
    });
  const wrapped = new Map<StageName, OpenAI>();
  return {
    model: options.model,
    forStage(stage) {
      let client = wrapped.get(stage);
      if (!client) wrapped.set(stage, (client = withFlights(sdk(stage), { flights, stage })));
      return client;
    },
    plain: sdk,
  };
}

/** The global `fetch`, reporting each request it sends to the model. */
function counted(stage: string, onModelCall: ModelCallListener): typeof fetch {
  return async (input, init) => {
    try {
      const response = await fetch(input, init);
      onModelCall(stage, response.ok ? 'ok' : 'error');
      return response;
    } catch (error) {
      onModelCall(stage, 'error');
      throw error;
    }
  };
}
