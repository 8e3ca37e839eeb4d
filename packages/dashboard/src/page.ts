/**
 * The dashboard's page: one self-contained HTML file (`page/dashboard.html`, shipped beside the build),
 * read once. It loads nothing from elsewhere; its inline script runs under a per-response nonce.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

let template: string | undefined;

export function renderPage(): { html: string; csp: string } {
  template ??= readFileSync(new URL('../page/dashboard.html', import.meta.url), 'utf8');
  const nonce = randomBytes(16).toString('base64');
  return {
    html: template.replaceAll('<script>', `<script nonce="${nonce}">`),
    csp: `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`,
  };
}
