/**
 * The invoker: the single entry of every AI call. Each stage has its own model client, wrapped by
 * `@flight/openai` (model-clients.ts): a stage's request names the session, the question and the answer
 * (its system and user messages), so the wrapper's key — the whole request, canonically — is the stage's
 * key, the same on every node, and identical calls are made once across the cluster:
 *
 *   openai.chat.completions.create(request, flightRequest({ sessionId }, { signal }))
 *
 * (the guard — timeout, bulkhead, circuit breaker, retry — and the session lock of heavy stages sit
 * inside, as the stage's policy).
 *
 * The evaluation and follow-up stages also stream: `evaluateStream` / `followUpStream` ask for prose with
 * `stream: true`, so every caller on every node receives the owner's tokens live, and a caller that lost
 * its connection continues after its last event on any node (`after`).
 */
import { FlightStreamInterruptedError, type FlightRole, type StreamPosition } from '@flight/core';
import { flightKeyOf, flightOf, flightRequest, positionOf } from '@flight/openai';
import type OpenAI from 'openai';
import type { Logger } from 'pino';
import type { LiveTracker } from './live.js';
import type { ModelClients } from './model-clients.js';
import { STAGES, type StageName } from './stages.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** What a stage call returns to every caller of the flight (identical for all of them). */
export interface AiAnswer {
  stage: StageName;
  /** The model's answer: parsed JSON when it is JSON, else the text. */
  answer: unknown;
  model: string;
  /** The completion's id and when the model made it (the same for every caller it was shared with). */
  completionId: string;
  producedAt: string;
  usage?: unknown;
}

/** A stage call as this caller was served. */
export interface StageResult {
  stage: StageName;
  key: string;
  role: FlightRole;
  shared: boolean;
  epoch: number | undefined;
  value: AiAnswer;
}

export interface InvokerDeps {
  models: ModelClients;
  logger: Logger;
  tracker: LiveTracker;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Streamed calls: resume after this position (a client that reconnected, on any node). */
  after?: StreamPosition | undefined;
}

/** How a streamed caller was served, once its text is complete. */
export interface StreamOutcome {
  role: FlightRole;
  shared: boolean;
  epoch: number | undefined;
  /** The whole answer (a resumed caller's too) and its number of text chunks. */
  text: string;
  chunks: number;
}

/** A streamed stage call: the text as it arrives, then how this caller was served. */
export interface StreamedAnswer {
  stage: StageName;
  key: string;
  /**
   * The answer's text deltas, the same sequence for every caller of the flight, each with its position
   * (`<epoch>.<index>`, the id a client resumes after); `restart` when the run was replaced (start over).
   */
  text: AsyncIterable<StreamedPiece>;
  /** Once the text is read: role, shared, epoch and the whole text. */
  result(): Promise<StreamOutcome>;
}

export type StreamedPiece = { text: string; id: string } | { restart: true; id: string };

/** The id of a position in a streamed answer: its run's epoch and how many events precede and include it. */
export const positionId = (epoch: number | undefined, index: number) => `${epoch ?? 0}.${index}`;

/** The position an id names, or undefined. */
export function parsePosition(id: string | undefined): StreamPosition | undefined {
  const match = /^(\d{1,16})\.(\d{1,9})$/.exec(id?.trim() ?? '');
  return match ? { epoch: Number(match[1]), index: Number(match[2]) } : undefined;
}

/** The text of a streamed chat event. */
const deltaOf = (event: OpenAI.Chat.Completions.ChatCompletionChunk) => event.choices[0]?.delta?.content ?? '';

export class InterviewAiInvoker {
  constructor(private readonly deps: InvokerDeps) {}

  /** Scores an answer. Its request names the stage, the session, the question and the answer. */
  evaluate(sessionId: string, input: { questionNumber: number; question: string; answer: string }, options: CallOptions = {}) {
    return this.call(STAGES.evaluation, sessionId, options, [
      this.system(
        STAGES.evaluation,
        sessionId,
        'Score the candidate answer from 0 to 100. Reply with JSON {"score": number, "verdict": string, "feedback": string}.',
      ),
      { role: 'user', content: `Question ${input.questionNumber}: ${input.question}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  /** Generates a follow-up question. Its request names the stage, the session, the current question and the answer. */
  followUp(sessionId: string, input: { currentQuestion: string; answer: string }, options: CallOptions = {}) {
    return this.call(STAGES.followup, sessionId, options, [
      this.system(STAGES.followup, sessionId, 'Ask one follow-up question that probes the answer. Reply with JSON {"question": string}.'),
      { role: 'user', content: `Current question: ${input.currentQuestion}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  /** Extracts interview questions from a résumé file. Its request names the stage, the session and the file. Session-locked. */
  extract(sessionId: string, input: { fileUrl: string }, options: CallOptions = {}) {
    return this.call(STAGES.extraction, sessionId, options, [
      this.system(
        STAGES.extraction,
        sessionId,
        'Read the résumé and propose three interview questions. Reply with JSON {"questions": string[]}.',
      ),
      { role: 'user', content: `Résumé file: ${input.fileUrl}` },
    ]);
  }

  /** Analyses the candidate's demeanor on a camera frame. Its request names the stage, the session and the frame. Session-locked, no L1. */
  demeanor(sessionId: string, input: { imageUrl: string }, options: CallOptions = {}) {
    return this.call(STAGES.demeanor, sessionId, options, [
      this.system(
        STAGES.demeanor,
        sessionId,
        'Describe the candidate demeanor on the frame. Reply with JSON {"engagement": string, "posture": string, "note": string}.',
      ),
      { role: 'user', content: `Camera frame: ${input.imageUrl}` },
    ]);
  }

  /** The evaluation as prose, streamed token by token to every caller. */
  evaluateStream(
    sessionId: string,
    input: { questionNumber: number; question: string; answer: string },
    options: CallOptions = {},
  ): StreamedAnswer {
    return this.stream(STAGES.evaluation, sessionId, options, [
      this.system(
        STAGES.evaluation,
        sessionId,
        'Score the candidate answer from 0 to 100, then say why in two sentences of plain text. [format:text]',
      ),
      { role: 'user', content: `Question ${input.questionNumber}: ${input.question}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  /** The follow-up question, streamed token by token to every caller. */
  followUpStream(sessionId: string, input: { currentQuestion: string; answer: string }, options: CallOptions = {}): StreamedAnswer {
    return this.stream(STAGES.followup, sessionId, options, [
      this.system(STAGES.followup, sessionId, 'Ask one follow-up question that probes the answer, in plain text. [format:text]'),
      { role: 'user', content: `Current question: ${input.currentQuestion}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  private system(stage: StageName, sessionId: string, task: string): ChatMessage {
    // The bracketed tags let the fake model count calls per stage and per session; real models ignore them.
    return { role: 'system', content: `You are an interview assistant. [stage:${stage}] [session:${sessionId}] ${task}` };
  }

  /** The stage's request (temperature 0: every request is coalesced), its client and the flight key it makes. */
  private request(stage: StageName, messages: ChatMessage[]) {
    const client = this.deps.models.forStage(stage);
    const body = { model: this.deps.models.model, messages, temperature: 0 };
    const keyOf = (request: object) => flightKeyOf(client.chat.completions, request)!.key;
    return { client, body, keyOf };
  }

  private async call(stage: StageName, sessionId: string, options: CallOptions, messages: ChatMessage[]): Promise<StageResult> {
    const { tracker } = this.deps;
    const { client, body, keyOf } = this.request(stage, messages);
    const key = keyOf(body);
    const log = this.deps.logger.child({ stage, key, sessionId });
    tracker.begin(stage, key, sessionId);
    let role: FlightRole | 'error' = 'error';
    try {
      const completion = await client.chat.completions.create(body, flightRequest({ sessionId }, { signal: options.signal }));
      const info = flightOf(completion)!;
      const content = completion.choices[0]?.message?.content;
      if (typeof content !== 'string') throw new Error('the model answered without choices[0].message.content');
      role = info.role;
      log.info({ role, shared: info.shared, epoch: info.epoch }, 'answered');
      const value: AiAnswer = {
        stage,
        answer: parseAnswer(content),
        model: completion.model,
        completionId: completion.id,
        producedAt: new Date(completion.created * 1000).toISOString(),
        usage: completion.usage,
      };
      return { stage, key, role: info.role, shared: info.shared, epoch: info.epoch, value };
    } catch (error) {
      const e = error as { code?: string; status?: number; message?: string };
      log.warn({ code: e.code, status: e.status, err: e.message }, 'call failed');
      throw error;
    } finally {
      tracker.end(stage, key, role);
    }
  }

  /**
   * A streamed call: nothing starts until `text` is iterated. The tracker sees this caller wait, the
   * text arrive and how the caller was served. A run replaced while this caller read it (its owner died)
   * is read again from its start, after a `restart` piece.
   */
  private stream(stage: StageName, sessionId: string, options: CallOptions, messages: ChatMessage[]): StreamedAnswer {
    const { tracker } = this.deps;
    const { client, body: answer, keyOf } = this.request(stage, messages);
    const body = { ...answer, stream: true as const };
    const key = keyOf(body);
    const log = this.deps.logger.child({ stage, key, sessionId });
    let outcome: StreamOutcome | undefined;
    /** The whole text of the kept run, for a caller that read only its end. */
    const wholeText = async (): Promise<string> => {
      let text = '';
      const stream = await client.chat.completions.create(body, flightRequest({ after: { epoch: undefined, index: 0 } }));
      for await (const event of stream) text += deltaOf(event);
      return text;
    };
    async function* text(): AsyncGenerator<StreamedPiece> {
      tracker.begin(stage, key, sessionId);
      let role: FlightRole | 'error' = 'error';
      let after = options.after;
      /** This caller holds only the run's events after `after`: the whole text is read from the kept run. */
      let partial = (after?.index ?? 0) > 0;
      let received = '';
      let chunks = 0;
      try {
        for (;;) {
          try {
            const request = flightRequest({ sessionId, ...(after ? { after } : {}) }, { signal: options.signal });
            const stream = await client.chat.completions.create(body, request);
            for await (const event of stream) {
              const piece = deltaOf(event);
              if (!piece) continue;
              const at = positionOf(stream)!;
              if (!options.after) tracker.chunk(stage, key, chunks, piece);
              received += piece;
              chunks++;
              yield { text: piece, id: positionId(at.epoch, at.index) };
            }
            const info = flightOf(stream)!;
            role = info.role;
            outcome = { role, shared: info.shared, epoch: info.epoch, text: partial ? await wholeText() : received, chunks };
            log.info({ role, shared: info.shared, epoch: info.epoch, chunks }, 'streamed');
            return;
          } catch (error) {
            const newEpoch = error instanceof FlightStreamInterruptedError ? error.context.newEpoch : undefined;
            if (typeof newEpoch !== 'number') throw error;
            after = { epoch: newEpoch, index: 0 };
            partial = false;
            received = '';
            chunks = 0;
            yield { restart: true, id: positionId(newEpoch, 0) };
          }
        }
      } catch (error) {
        const e = error as { code?: string; status?: number; message?: string };
        log.warn({ code: e.code, status: e.status, err: e.message, chunks }, 'stream failed');
        throw error;
      } finally {
        tracker.end(stage, key, role);
      }
    }
    return {
      stage,
      key,
      text: text(),
      async result() {
        if (!outcome) throw new Error('read the text to its end first');
        return outcome;
      },
    };
  }
}

function parseAnswer(content: string): unknown {
  const trimmed = content.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    return JSON.parse(trimmed);
  } catch {
    return content;
  }
}
