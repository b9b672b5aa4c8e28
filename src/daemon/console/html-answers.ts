/**
 * The few pages the daemon writes itself rather than the console app: the answers of sign-in
 * steps a browser navigates to (a used link, a refused or completed OIDC sign-in). Plain HTML,
 * no script, under the console's Content-Security-Policy.
 */
import type { FastifyReply } from 'fastify';

/** The Content-Security-Policy of every console page: nothing inline, nothing from elsewhere, never framed. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The security headers every console answer carries. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Sends `html` with `status`, uncached, under the console's headers. */
export function htmlAnswer(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .status(status)
    .headers(CONSOLE_HEADERS)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * A short page: a heading, a line, and a link on to `next` (the sign-in page by default). With
 * `next`, the browser goes there by itself (a meta refresh: no script needed).
 */
export function signInPage(heading: string, line: string, next?: string): string {
  const target = escapeHtml(next ?? '/sign-in');
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    next === undefined ? '' : `<meta http-equiv="refresh" content="0;url=${target}">`,
    `<title>${escapeHtml(heading)} · wfx</title></head>`,
    `<body><main><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(line)}</p>`,
    `<p><a href="${target}">${next === undefined ? 'Sign in' : 'Continue'}</a></p></main></body></html>`,
  ].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
