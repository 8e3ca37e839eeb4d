/**
 * Where a request to a resumable route asks to continue: after the event its `Last-Event-ID` header (or
 * the route's query parameter) names. An id must name this very flight: its tag is checked against the
 * flight key computed from this request, so another user's or another URL's id is refused.
 */
import { FlightResumeInvalidError, FlightResumeMismatchError } from '../errors.js';
import type { ResolvedResume } from '../options.js';
import type { HttpRequestInfo } from '../request.js';
import { flightTag, parseEventId, type EventPosition } from './event-id.js';

/** A resumable flight's event ids for one request, and the event it resumes after (if it does). */
export interface ResumeRequest {
  tag: string;
  /** What a resume whose stream is gone gets. */
  expired: 'gone' | 'restart';
  /** The last event the client received, when it is resuming. */
  after: EventPosition | undefined;
}

/** The last event id the request carries: the header first, then the query parameter; undefined for none. */
function lastEventIdOf(request: HttpRequestInfo, param: string | undefined): string | undefined {
  const header = request.headers['last-event-id'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') return value;
  if (param === undefined || request.query.length === 0) return undefined;
  return new URLSearchParams(request.query).get(param)?.trim() || undefined;
}

export function resumeRequestOf(request: HttpRequestInfo, resume: ResolvedResume, stage: string, key: string): ResumeRequest {
  const tag = flightTag(stage, key);
  const id = lastEventIdOf(request, resume.param);
  if (id === undefined) return { tag, expired: resume.expired, after: undefined };
  const after = parseEventId(id);
  if (!after) throw new FlightResumeInvalidError('Last-Event-ID is not an event id of this route');
  if (after.tag !== tag) throw new FlightResumeMismatchError('Last-Event-ID names the stream of another request');
  // Position 0 is a `flight-restart` event: the client starts over, as a new request does.
  return { tag, expired: resume.expired, after: after.index === 0 ? undefined : after };
}

/** The query string without the resume parameter (it is not part of what the request asks for). */
export function withoutResumeParam(query: string, param: string | undefined): string {
  if (param === undefined || query.length === 0 || !query.includes(param)) return query;
  const params = new URLSearchParams(query);
  if (!params.has(param)) return query;
  params.delete(param);
  return params.toString();
}
