/**
 * Where the console goes after signing in: a `returnTo` path, checked the same way by the
 * sign-in page (after an API key) and by the daemon (after the identity provider), so that a
 * link to the sign-in page can never send a person to another site (an open redirect). The
 * browser forgives much when it resolves a URL: it drops tabs and line breaks anywhere, and reads
 * `\` as `/`, so `/<TAB>/evil.example` and `/\evil.example` both reach `//evil.example`. Only a
 * plain path passes, and it must still resolve to the origin it is resolved against.
 */

/** Where a sign-in goes when it was given no `returnTo`, or one that did not pass: the console's start page. */
export const CONSOLE_START = '/';

/** The longest `returnTo` taken (as GET /auth/login takes it). */
export const RETURN_TO_MAX_LENGTH = 2000;

/**
 * A path of the console: one `/`, then path characters, then an optional query and fragment,
 * ASCII only: no white space or control character (which the URL parser drops or encodes), no
 * `\` (which it reads as `/`). Escapes (`%` and two hex digits) are checked apart.
 */
const PLAIN_PATH =
  /^\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?$/;

/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * In the path: an encoded control character, space, `%`, `/`, `\`, or any byte past ASCII
 * (the first byte of an encoded non-ASCII space among them). A path of the console never needs
 * one (ids and names are plain ASCII), and a server or script that decodes once more would read
 * a separator or an address into it.
 */
const BAD_PATH_ESCAPE = /%(?:[01][0-9A-Fa-f]|2[05Ff]|5[Cc]|7[Ff]|[89A-Fa-f][0-9A-Fa-f])/;

/** Anywhere (query and fragment too): an encoded control character. */
const CONTROL_ESCAPE = /%(?:[01][0-9A-Fa-f]|7[Ff])/;

/** The sign-in page itself: coming back to it would ask again. */
const SIGN_IN = /^\/sign-in(?:[/?#]|$)/;

/** The origin `returnTo` is resolved against; never reached. */
const PROBE = 'http://return-to.invalid';

/**
 * `value` when it is a path of this origin the console may go to after signing in; otherwise
 * `fallback` (the console's start page). Passes only a plain path (PLAIN_PATH, without the
 * escapes refused above, not the sign-in page), and only if WHATWG URL resolves it, against a
 * probe origin, to that same origin with a path that does not begin `//`. Pure; never throws.
 */
export function safeReturnTo(value: unknown, fallback: string = CONSOLE_START): string {
  if (typeof value !== 'string' || value.length > RETURN_TO_MAX_LENGTH || !PLAIN_PATH.test(value)) return fallback;
  const path = value.split(/[?#]/, 1)[0]!;
  if (BAD_ESCAPE.test(value) || BAD_PATH_ESCAPE.test(path) || CONTROL_ESCAPE.test(value) || SIGN_IN.test(value))
    return fallback;
  let resolved: URL;
  try {
    resolved = new URL(value, PROBE);
  } catch {
    return fallback;
  }
  if (resolved.origin !== PROBE || resolved.pathname.startsWith('//')) return fallback;
  return value;
}
