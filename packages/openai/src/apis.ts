/** The SDK methods a wrapped client coalesces, by where they sit on the client. */
export type CoalescedApi = 'chat.completions' | 'responses' | 'embeddings';

export interface ApiSpec {
  api: CoalescedApi;
  /** The resource path on the client (`client.chat.completions`). */
  path: readonly string[];
  /** Whether `stream: true` is a streamed answer. */
  streams: boolean;
  /** Whether sampling parameters apply (see sampling.ts). */
  samples: boolean;
  /** The GenAI operation name (OpenTelemetry semantic conventions). */
  operation: 'chat' | 'embeddings';
}

export const APIS: readonly ApiSpec[] = [
  { api: 'chat.completions', path: ['chat', 'completions'], streams: true, samples: true, operation: 'chat' },
  { api: 'responses', path: ['responses'], streams: true, samples: true, operation: 'chat' },
  { api: 'embeddings', path: ['embeddings'], streams: false, samples: false, operation: 'embeddings' },
];

export const COALESCED_APIS: readonly CoalescedApi[] = APIS.map((spec) => spec.api);
