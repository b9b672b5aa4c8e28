/**
 * The few pages the daemon writes itself rather than the console app: the answers of sign-in
 * steps a browser navigates to (a used link, a link to confirm, a refused or completed OIDC
 * sign-in). Plain HTML, no script, under the console's Content-Security-Policy.
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

/** Sends `html` with `status`, uncached, under the console's headers (`headers` over them). */
export function htmlAnswer(
  reply: FastifyReply,
  status: number,
  html: string,
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  return reply
    .status(status)
    .headers(CONSOLE_HEADERS)
    .headers(headers)
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

/** Whose session a one-time link would open, as its confirmation page names it (never a secret). */
export interface LinkIdentity {
  readonly keyId: string;
  readonly keyName: string;
  readonly role: string;
  /** Null for a system key. */
  readonly organization: string | null;
}

/**
 * The page a one-time link answers when it will not sign in at once: whose session the link
 * opens, a warning, and a button that posts the token back (POST /auth/link) to sign in.
 */
export function linkConfirmPage(identity: LinkIdentity, token: string): string {
  const org = identity.organization;
  const as = `the API key <strong>${escapeHtml(identity.keyName)}</strong> (id <code>${escapeHtml(identity.keyId)}</code>, ${escapeHtml(identity.role)})`;
  const where =
    org === null
      ? 'a <strong>system</strong> key (every organization)'
      : `of the organization <strong>${escapeHtml(org)}</strong>`;
  const button = `Sign in as ${identity.keyName} (${org ?? 'system'})`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Sign in with this link? · wfx</title></head>',
    '<body><main><h1>Sign in with this link?</h1>',
    `<p>This one-time link signs this browser in to wfx as ${as}, ${where}, in place of any session it has now.</p>`,
    '<p>Go on only if you asked for this link yourself (<code>wfx console</code>). A link someone else sent you',
    'signs you in as them: what you enter next would go to their organization.</p>',
    '<form method="post" action="/auth/link">',
    `<input type="hidden" name="token" value="${escapeHtml(token)}">`,
    `<button type="submit">${escapeHtml(button)}</button>`,
    '</form>',
    '<p><a href="/">Do not use this link</a></p></main></body></html>',
  ].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
