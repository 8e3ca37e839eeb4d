/** Reading a captured response's headers: every value of one, their joined text, and a list header's tokens. */
import type { OutgoingHttpHeaders } from 'node:http';

export function headerValues(value: OutgoingHttpHeaders[string]): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

export function header(headers: OutgoingHttpHeaders, name: string): string {
  return headerValues(headers[name]).join(', ');
}

/** Comma-separated tokens of a header, lower-case, without parameters. */
export function tokens(value: string): string[] {
  return value
    .split(',')
    .map((token) => token.split('=')[0]!.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * The delta-seconds of Cache-Control directive `name` in `value` (`stale-while-revalidate=30` → 30); undefined
 * when it is absent or not a non-negative integer (RFC 9111 §1.2.2; a quoted value is accepted).
 */
export function directiveSeconds(value: string, name: string): number | undefined {
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim().toLowerCase() !== name) continue;
    const text = part
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    return /^\d+$/.test(text) ? Number(text) : undefined;
  }
  return undefined;
}
