/**
 * The invoker: the single entry of every AI call. It builds the normalised
 * flight key of the stage (so every node computes the same key for the same request), and wraps
 * the model call as the supplier that single-flight runs once across the cluster:
 *
 *   flight.execute(stage, key, (ctx) => model.chat(prompt, { signal: ctx.signal }))
 *
 * (the guard — timeout, bulkhead, circuit breaker, retry — sits inside `execute`, around the supplier).
 */
import { buildFlightKey, hashPart, type FlightResult, type KeyPart, type SingleFlight } from '@flight/core';
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
}

export class InterviewAiInvoker {
  constructor(private readonly deps: InvokerDeps) {}

  /** Scores an answer. Key: stage + sessionId + questionNumber + answerHash. */
  evaluate(sessionId: string, input: { questionNumber: number; question: string; answer: string }, options: CallOptions = {}) {
    return this.call(STAGES.evaluation, sessionId, [sessionId, input.questionNumber, hashPart(input.answer)], options, [
      this.system(STAGES.evaluation, sessionId, 'Score the candidate answer from 0 to 100. Reply with JSON {"score": number, "verdict": string, "feedback": string}.'),
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
      this.system(STAGES.extraction, sessionId, 'Read the résumé and propose three interview questions. Reply with JSON {"questions": string[]}.'),
      { role: 'user', content: `Résumé file: ${input.fileUrl}` },
    ]);
  }

  /** Analyses the candidate's demeanor on a camera frame. Key: stage + sessionId + imageUrl. Session-locked, no L1. */
  demeanor(sessionId: string, input: { imageUrl: string }, options: CallOptions = {}) {
    return this.call(STAGES.demeanor, sessionId, [sessionId, input.imageUrl], options, [
      this.system(STAGES.demeanor, sessionId, 'Describe the candidate demeanor on the frame. Reply with JSON {"engagement": string, "posture": string, "note": string}.'),
      { role: 'user', content: `Camera frame: ${input.imageUrl}` },
    ]);
  }

  private system(stage: StageName, sessionId: string, task: string): ChatMessage {
    // The bracketed tags let the fake model count calls per stage and per session; real models ignore them.
    return { role: 'system', content: `You are an interview assistant. [stage:${stage}] [session:${sessionId}] ${task}` };
  }

  private async call(stage: StageName, sessionId: string, parts: KeyPart[], options: CallOptions, messages: ChatMessage[]): Promise<FlightResult<AiAnswer>> {
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
}

function parseAnswer(content: string): unknown {
  const trimmed = content.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  try {
    return JSON.parse(trimmed);
  } catch {
    return content;
  }
}
