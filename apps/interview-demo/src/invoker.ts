/**
 * The invoker: the single entry of every AI call. It builds the normalised
 * flight key of the stage (so every node computes the same key for the same request), and wraps
 * the model call as the supplier that single-flight runs once across the cluster:
 *
 *   flight.execute(stage, key, (ctx) => model.chat(prompt, { signal: ctx.signal }))
 *
 * (the guard — timeout, bulkhead, circuit breaker, retry — sits inside `execute`, around the supplier).
 *
 * The evaluation and follow-up stages also stream: `evaluateStream` / `followUpStream` ask for prose and
 * run the model's streamed answer as the supplier of `flight.executeStream`, so every caller on every
 * node receives the owner's tokens live (their key is the stage's key plus `stream`: a streamed flight
 * stores its chunks, not an `AiAnswer`).
 */
import {
  buildFlightKey,
  FlightStreamRestart,
  hashPart,
  type FlightContext,
  type FlightResult,
  type KeyPart,
  type SingleFlight,
  type StreamPosition,
} from '@flight/core';
import type { Logger } from 'pino';
import type { LiveTracker } from './live.js';
import type { ChatMessage, ModelClient } from './model-client.js';
import { STAGES, type StageName } from './stages.js';

/** What a stage call returns to every caller of the flight (identical for all of them). */
export interface AiAnswer {
  stage: StageName;
  /** The model's answer: parsed JSON when it is JSON, else the text. */
  answer: unknown;
  model: string;
  /** The node whose model call produced it, and when. */
  producedBy: string;
  producedAt: string;
  usage?: unknown;
}

export interface InvokerDeps {
  flight: SingleFlight;
  model: ModelClient;
  nodeId: string;
  logger: Logger;
  tracker: LiveTracker;
  onModelCall?: (stage: StageName, outcome: 'ok' | 'error') => void;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Streamed calls: resume after this position (a client that reconnected, on any node). */
  after?: StreamPosition | undefined;
}

/** A streamed stage call: the text as it arrives, then how this caller was served. */
export interface StreamedAnswer {
  stage: StageName;
  key: string;
  /**
   * The answer's text deltas, the same sequence for every caller of the flight, each with its position
   * (`<epoch>.<count>`, the id a client resumes after); `restart` when the run was replaced (start over).
   */
  text: AsyncIterable<StreamedPiece>;
  /** Once the text is complete: role, shared, epoch and every chunk. */
  result(): Promise<FlightResult<string[]>>;
}

export type StreamedPiece = { text: string; id: string } | { restart: true; id: string };

/** The id of a position in a streamed answer: its run's epoch and how many chunks precede and include it. */
export const positionId = (epoch: number | undefined, count: number) => `${epoch ?? 0}.${count}`;

/** The position an id names, or undefined. */
export function parsePosition(id: string | undefined): StreamPosition | undefined {
  const match = /^(\d{1,16})\.(\d{1,9})$/.exec(id?.trim() ?? '');
  return match ? { epoch: Number(match[1]), index: Number(match[2]) } : undefined;
}

export class InterviewAiInvoker {
  constructor(private readonly deps: InvokerDeps) {}

  /** Scores an answer. Key: stage + sessionId + questionNumber + answerHash. */
  evaluate(sessionId: string, input: { questionNumber: number; question: string; answer: string }, options: CallOptions = {}) {
    return this.call(STAGES.evaluation, sessionId, [sessionId, input.questionNumber, hashPart(input.answer)], options, [
      this.system(
        STAGES.evaluation,
        sessionId,
        'Score the candidate answer from 0 to 100. Reply with JSON {"score": number, "verdict": string, "feedback": string}.',
      ),
      { role: 'user', content: `Question ${input.questionNumber}: ${input.question}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  /** Generates a follow-up question. Key: stage + sessionId + currentQuestion + answerHash. */
  followUp(sessionId: string, input: { currentQuestion: string; answer: string }, options: CallOptions = {}) {
    return this.call(STAGES.followup, sessionId, [sessionId, input.currentQuestion, hashPart(input.answer)], options, [
      this.system(STAGES.followup, sessionId, 'Ask one follow-up question that probes the answer. Reply with JSON {"question": string}.'),
      { role: 'user', content: `Current question: ${input.currentQuestion}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  /** Extracts interview questions from a résumé file. Key: stage + sessionId + fileUrl. Session-locked. */
  extract(sessionId: string, input: { fileUrl: string }, options: CallOptions = {}) {
    return this.call(STAGES.extraction, sessionId, [sessionId, input.fileUrl], options, [
      this.system(
        STAGES.extraction,
        sessionId,
        'Read the résumé and propose three interview questions. Reply with JSON {"questions": string[]}.',
      ),
      { role: 'user', content: `Résumé file: ${input.fileUrl}` },
    ]);
  }

  /** Analyses the candidate's demeanor on a camera frame. Key: stage + sessionId + imageUrl. Session-locked, no L1. */
  demeanor(sessionId: string, input: { imageUrl: string }, options: CallOptions = {}) {
    return this.call(STAGES.demeanor, sessionId, [sessionId, input.imageUrl], options, [
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
    return this.stream(STAGES.evaluation, sessionId, [sessionId, input.questionNumber, hashPart(input.answer)], options, [
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
    return this.stream(STAGES.followup, sessionId, [sessionId, input.currentQuestion, hashPart(input.answer)], options, [
      this.system(STAGES.followup, sessionId, 'Ask one follow-up question that probes the answer, in plain text. [format:text]'),
      { role: 'user', content: `Current question: ${input.currentQuestion}\n\nCandidate answer:\n${input.answer}` },
    ]);
  }

  private system(stage: StageName, sessionId: string, task: string): ChatMessage {
    // The bracketed tags let the fake model count calls per stage and per session; real models ignore them.
    return { role: 'system', content: `You are an interview assistant. [stage:${stage}] [session:${sessionId}] ${task}` };
  }

  private async call(
    stage: StageName,
    sessionId: string,
    parts: KeyPart[],
    options: CallOptions,
    messages: ChatMessage[],
  ): Promise<FlightResult<AiAnswer>> {
    const { flight, model, nodeId, tracker } = this.deps;
    const key = buildFlightKey(stage, parts);
    const log = this.deps.logger.child({ stage, key, sessionId });
    tracker.begin(stage, key, sessionId);
    let role: FlightResult<AiAnswer>['role'] | 'error' = 'error';
    try {
      const result = await flight.execute<AiAnswer>(
        stage,
        key,
        async (ctx) => {
          log.info({ role: ctx.role, epoch: ctx.epoch, attempt: ctx.attempt }, 'calling the model');
          tracker.modelCall(stage);
          try {
            const completion = await model.chat(messages, { signal: ctx.signal });
            this.deps.onModelCall?.(stage, 'ok');
            return {
              stage,
              answer: parseAnswer(completion.content),
              model: completion.model,
              producedBy: nodeId,
              producedAt: new Date().toISOString(),
              usage: completion.usage,
            };
          } catch (error) {
            this.deps.onModelCall?.(stage, 'error');
            log.warn({ role: ctx.role, epoch: ctx.epoch, err: (error as Error).message }, 'model call failed');
            throw error;
          }
        },
        { sessionId, signal: options.signal },
      );
      role = result.role;
      log.info({ role: result.role, shared: result.shared, epoch: result.epoch }, 'answered');
      return result;
    } catch (error) {
      const e = error as { code?: string; errorType?: string; replayed?: boolean; message?: string };
      log.warn({ role: e.replayed ? 'replay' : 'none', code: e.code, errorType: e.errorType, err: e.message }, 'call failed');
      throw error;
    } finally {
      tracker.end(stage, key, role);
    }
  }

  /**
   * A streamed flight: nothing starts until `text` is iterated. The tracker sees this caller wait, the
   * text arrive and how the caller was served.
   */
  private stream(stage: StageName, sessionId: string, parts: KeyPart[], options: CallOptions, messages: ChatMessage[]): StreamedAnswer {
    const { flight, tracker } = this.deps;
    const key = buildFlightKey(stage, [...parts, 'stream']);
    const log = this.deps.logger.child({ stage, key, sessionId });
    // A resumed caller (`after`) is told of a replaced run instead of being cut off.
    const stream = flight.executeStream<string>(stage, key, (ctx) => this.modelStream(stage, messages, log, ctx), {
      sessionId,
      signal: options.signal,
      onRestart: 'restart',
      ...(options.after ? { after: options.after } : {}),
    });
    async function* text(): AsyncGenerator<StreamedPiece> {
      tracker.begin(stage, key, sessionId);
      let role: FlightResult<string[]>['role'] | 'error' = 'error';
      let index = options.after?.index ?? 0;
      try {
        for await (const chunk of stream) {
          if (chunk instanceof FlightStreamRestart) {
            index = 0;
            yield { restart: true, id: positionId(chunk.epoch, 0) };
            continue;
          }
          tracker.chunk(stage, key, index++, chunk);
          yield { text: chunk, id: positionId(stream.epoch, index) };
        }
        const result = await stream.result();
        role = result.role;
        log.info({ role, shared: result.shared, epoch: result.epoch, chunks: index }, 'streamed');
      } catch (error) {
        const e = error as { code?: string; errorType?: string; message?: string };
        log.warn({ role: 'none', code: e.code, errorType: e.errorType, err: e.message, chunks: index }, 'stream failed');
        throw error;
      } finally {
        tracker.end(stage, key, role);
      }
    }
    // The stored value is the run's chunks: restart markers are only ever given while iterating.
    return { stage, key, text: text(), result: () => stream.result() as Promise<FlightResult<string[]>> };
  }

  /** The supplier of a streamed flight: the model's streamed answer, counted like a model call. */
  private async *modelStream(stage: StageName, messages: ChatMessage[], log: Logger, ctx: FlightContext): AsyncGenerator<string> {
    log.info({ role: ctx.role, epoch: ctx.epoch, attempt: ctx.attempt }, 'calling the model (streamed)');
    this.deps.tracker.modelCall(stage);
    try {
      yield* this.deps.model.chatStream(messages, { signal: ctx.signal });
      this.deps.onModelCall?.(stage, 'ok');
    } catch (error) {
      this.deps.onModelCall?.(stage, 'error');
      log.warn({ role: ctx.role, epoch: ctx.epoch, err: (error as Error).message }, 'streamed model call failed');
      throw error;
    }
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
