import t from 'tap';
import { CONSOLE_START, safeReturnTo } from '../../src/shared/return-to.js';

/*
 * The one check of where the console goes after signing in (the sign-in page after a key, the
 * daemon after the identity provider). Each refused input below is one the browser would take
 * off this origin, or could after one more decoding, or is simply not a console path.
 */

const KEPT = [
  '/',
  '/executions',
  '/executions?state=FAILED',
  '/executions/0c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6?node=lines.calc',
  '/tasks/0c1e2f3a/approve',
  '/triggers/webhooks/github-main',
  // A filter's value as URLSearchParams writes it: an encoded slash, colon and space in the query.
  '/executions?correlationKey=order%2F7&startedAfter=2026-01-01T00%3A00%3A00.000Z&q=two+words%20too',
  '/flows/x#source',
  '/auth/whoami',
  '/manage/keys',
];

const REFUSED: Array<[string, unknown]> = [
  ['nothing', undefined],
  ['null', null],
  ['a number', 42],
  ['empty', ''],
  ['relative', 'executions'],
  ['protocol-relative', '//evil.example/x'],
  ['three slashes', '///evil.example/x'],
  ['backslash after the slash', '/\\evil.example/x'],
  ['two backslashes', '\\\\evil.example/x'],
  ['a backslash later on', '/executions\\..\\x'],
  ['tab after the slash', '/\t/evil.example/x'],
  ['CR after the slash', '/\r/evil.example/x'],
  ['LF after the slash', '/\n/evil.example/x'],
  ['tab then backslash', '/\t\\evil.example/x'],
  ['a tab later on', '/executions\t'],
  ['a space', '/executions /x'],
  ['a leading space', ' /executions'],
  ['vertical tab', '/\v/evil.example'],
  ['form feed', '/\f/evil.example'],
  ['NUL', '/\0/evil.example'],
  ['DEL', '/\x7f/evil.example'],
  ['no-break space', '/\u00a0/evil.example'],
  ['line separator', '/\u2028/evil.example'],
  ['ideographic space', '/\u3000/evil.example'],
  ['BOM', '/\ufeff/evil.example'],
  ['non-ASCII letter', '/ﬂows'],
  ['encoded slash', '/%2F/evil.example/x'],
  ['encoded slash, lower case', '/%2f%2fevil.example'],
  ['encoded backslash', '/%5Cevil.example'],
  ['encoded backslash, lower case', '/%5cevil.example'],
  ['encoded tab', '/%09/evil.example'],
  ['encoded CR', '/%0D/evil.example'],
  ['encoded LF', '/%0a/evil.example'],
  ['encoded space', '/%20/evil.example'],
  ['encoded DEL', '/%7F/evil.example'],
  ['encoded no-break space', '/%C2%A0/evil.example'],
  ['double encoding', '/%252F%252Fevil.example'],
  ['an encoded control in the query', '/executions?x=%0A'],
  ['an encoded control in the fragment', '/executions#%09'],
  ['a broken escape', '/executions%2'],
  ['a broken escape in the query', '/executions?x=%zz'],
  ['dot segment to //', '/.//evil.example/x'],
  ['dot-dot segment to //', '/a/..//evil.example/x'],
  ['http URL', 'http://evil.example/x'],
  ['https URL', 'https://evil.example/x'],
  ['scheme without slashes', 'http:evil.example'],
  ['upper-case scheme', 'HTTPS://evil.example'],
  ['javascript:', 'javascript:alert(1)'],
  ['javascript: after a slash', '/javascript:alert(1)#x\n'],
  ['data:', 'data:text/html,<script>alert(1)</script>'],
  ['a quote and angle brackets', '/executions"><script>'],
  ['the sign-in page', '/sign-in'],
  ['the sign-in page with a query', '/sign-in?returnTo=%2Fexecutions'],
  ['too long', `/${'a'.repeat(2000)}`],
];

t.test('a path of the console is kept as it is', async (t) => {
  for (const path of KEPT) t.equal(safeReturnTo(path), path, path);
  t.equal(safeReturnTo('/sign-inx'), '/sign-inx', 'only the sign-in page itself is refused, not a name it begins');
});

t.test('anything else falls back to the start page, or to the fallback given', async (t) => {
  t.equal(CONSOLE_START, '/');
  for (const [why, value] of REFUSED) {
    t.equal(safeReturnTo(value), '/', why);
    t.equal(safeReturnTo(value, '/executions'), '/executions', `${why}, with a fallback`);
  }
});

t.test('whatever is kept, from every mix of separators, resolves to the origin', async (t) => {
  // Every string of up to four of these pieces: what is kept must stay on the origin it is
  // resolved against, with a path that does not begin `//`, as the browser resolves it.
  const pieces = ['/', '\\', '\t', '\n', '\r', ' ', '%2F', '%5C', '%09', '.', '..', 'evil.example', ':', '@', '?', '#'];
  const base = 'http://127.0.0.1:7878';
  const escaped: string[] = [];
  let kept = 0;
  const visit = (prefix: string, depth: number) => {
    const value = safeReturnTo(prefix);
    if (value !== '/') {
      kept++;
      const url = new URL(value, base);
      if (url.origin !== base || url.pathname.startsWith('//')) escaped.push(prefix);
    }
    if (depth < 4) for (const piece of pieces) visit(prefix + piece, depth + 1);
  };
  visit('', 0);
  t.same(escaped, [], 'none leaves the origin');
  t.ok(kept > 100, `some are kept (${kept}): the check is not refusing everything`);
});
