import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/*
 * The console reaches the API only through the typed calls of shared/api/calls: no file of
 * src/console writes an API path, nor pairs one with a type (`api<T>('/…')`). The console's own
 * page paths (/executions, /flows/…, /manage/…) are not the API's and may be written.
 */

/** src/console, from dist/test/console/ where the build puts this test. */
const CONSOLE = fileURLToPath(new URL('../../../src/console', import.meta.url));

/** The first segments of the API's paths (the console's pages use none of them). */
const API_PATH = /(['"`])\/(process|admin|auth|jobs|files|events|health)\b/;
/** A request typed by assertion: `api<T>(`, `send<T>(`, `useApi<T>(` (not their declarations). */
const TYPED_REQUEST = /(?<!function )\b(api|send|useApi|fetch)<[^>]+>\(/;

/** `text` without its comments (an example in a doc comment is no request). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The lines of `text` that write an API path or type a request by hand, as `line: text`. */
function offences(text: string): string[] {
  return code(text)
    .split('\n')
    .flatMap((line, i) => (API_PATH.test(line) || TYPED_REQUEST.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

t.test('the check finds what it looks for', async (t) => {
  t.same(offences("const x = api<KeyList>('/admin/api-keys');"), ["1: const x = api<KeyList>('/admin/api-keys');"]);
  t.equal(offences('useApi(`/process/instances?parentId=${id}`)').length, 1, 'a path by hand, even untyped');
  t.equal(offences('send<Started>(call)').length, 1, 'a type asserted on a call');
  t.same(offences('export function send<T>(call: Call<T>) {}'), [], 'the declaration of a typed call');
  t.same(
    offences('/** GET /admin/flows */\nconst href = `/flows/${id}`; // not /process/x'),
    [],
    'comments and page paths',
  );
});

t.test('no file of the console writes an API path or types a request by hand', async (t) => {
  const files = sources(CONSOLE);
  t.ok(files.length > 50, `the console's files were read (${files.length})`);
  for (const file of files) t.same(offences(readFileSync(file, 'utf8')), [], relative(CONSOLE, file));
});
