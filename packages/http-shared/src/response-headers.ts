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
