import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { CONSOLE_PAGES } from '../../../../src/daemon/api/console/assets.js';
import { CONSOLE_HEADERS } from '../../../../src/daemon/api/console/html-answers.js';
import { apiHarness } from '../../../helpers/api.js';

const INDEX =
  '<!doctype html><html lang="en"><head><script type="module" src="/assets/main-ABC123.js"></script></head></html>\n';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;

/** A built console as scripts/build.mjs lays it out, plus a file beside assets/ that must never be served. */
function builtConsole(t: Test) {
  return t.testdir({
    'index.html': INDEX,
    'secret.txt': 'not an asset',
    assets: {
      'main-ABC123.js': SCRIPT,
      'main-ABC123.css': 'body{color:red}\n',
      'main-ABC123.js.map': '{"version":3}',
      'notes.txt': 'an unknown type',
    },
  });
}
/** Every console answer's security headers are present with the exact values. */
function hasConsoleHeaders(t: Test, headers: Record<string, unknown>, what: string) {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) t.equal(headers[name], value, `${what}: ${name}`);
}

t.test('each page path answers index.html, not cached, with the console headers', async (t) => {
  const h = await apiHarness(t, { console: { dir: builtConsole(t) } });
  for (const url of [
    '/',
    '/sign-in',
    '/executions',
    '/executions/abc-123',
    '/executions?state=FAILED',
    '/flows',
    '/flows/order',
    '/flows/order/run',
    '/bulk',
    '/bulk/01a2163f-86a1',
    '/tasks',
    '/tasks/abc-123/ask',
  ]) {
    const res = await h.call(null, { method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.equal(res.body, INDEX, `${url}: index.html`);
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/, url);
    t.equal(res.headers['cache-control'], 'no-cache', url);
    t.match(res.headers.etag, /^"[A-Za-z0-9_-]+"$/, `${url}: a strong ETag`);
    hasConsoleHeaders(t, res.headers, url);
  }
  const head = await h.call(null, { method: 'HEAD', url: '/executions' });
  t.equal(head.statusCode, 200);
  t.equal(head.body, '', 'HEAD: no body');
  hasConsoleHeaders(t, head.headers, 'HEAD');
});

t.test('an asset answers with its type, cached for good, 304 when the client has it, gzipped when taken', async (t) => {
  const h = await apiHarness(t, { console: { dir: builtConsole(t) } });
  const js = await h.call(null, { method: 'GET', url: '/assets/main-ABC123.js' });
  t.equal(js.statusCode, 200);
  t.equal(js.body, SCRIPT);
  t.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(js.headers.vary, 'Accept-Encoding');
  hasConsoleHeaders(t, js.headers, 'asset');

  const again = await h.call(null, {
    method: 'GET',
    url: '/assets/main-ABC123.js',
    headers: { 'if-none-match': String(js.headers.etag) },
  });
  t.equal(again.statusCode, 304);
  t.equal(again.body, '');
  t.equal(again.headers['cache-control'], 'public, max-age=31536000, immutable');
  hasConsoleHeaders(t, again.headers, '304');
  const other = await h.call(null, {
    method: 'GET',
    url: '/assets/main-ABC123.js',
    headers: { 'if-none-match': '"other"' },
  });
  t.equal(other.statusCode, 200, 'another ETag: the file');

  const gz = await h.call(null, {
    method: 'GET',
    url: '/assets/main-ABC123.js',
    headers: { 'accept-encoding': 'br, gzip' },
  });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(gz.rawPayload).toString(), SCRIPT, 'the same file, gzipped');
  t.not(gz.headers.etag, js.headers.etag, 'the gzipped representation has its own ETag');
  const refused = await h.call(null, {
    method: 'GET',
    url: '/assets/main-ABC123.js',
    headers: { 'accept-encoding': 'gzip;q=0' },
  });
  t.equal(refused.headers['content-encoding'], undefined, 'gzip;q=0 is a refusal');

  const css = await h.call(null, { method: 'GET', url: '/assets/main-ABC123.css' });
  t.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  const map = await h.call(null, { method: 'GET', url: '/assets/main-ABC123.js.map' });
  t.equal(map.headers['content-type'], 'application/json; charset=utf-8');
});

t.test('a missing asset is a 404 NOT_FOUND in the error body, never index.html', async (t) => {
  const h = await apiHarness(t, { console: { dir: builtConsole(t) } });
  for (const url of ['/assets/main-GONE.js', '/assets/notes.txt', '/assets/', '/assets/main-ABC123.js/x']) {
    const res = await h.call(null, { method: 'GET', url });
    t.equal(res.statusCode, 404, url);
    t.equal(res.json().error, 'NOT_FOUND', url);
    t.notMatch(res.body, /doctype/i, `${url}: not index.html`);
    hasConsoleHeaders(t, res.headers, url);
  }
});

/** GET `rawPath` exactly as written (inject() and fetch() normalize `..` away), over a real connection. */
function getRaw(port: number, rawPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: rawPath, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a path out of assets/ is refused: .., encoded dots and slashes, backslashes', async (t) => {
  const h = await apiHarness(t, { console: { dir: builtConsole(t) } });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as AddressInfo;
  for (const path of [
    '/assets/../index.html',
    '/assets/../secret.txt',
    '/assets/..',
    '/assets/..%2Fsecret.txt',
    '/assets/%2e%2e/secret.txt',
    '/assets/%2e%2e%2fsecret.txt',
    '/assets/..\\secret.txt',
    '/assets/..%5Csecret.txt',
    '/assets/main-ABC123%2Ejs',
    '/assets/%2Fetc%2Fpasswd',
  ]) {
    const res = await getRaw(port, path);
    t.equal(res.status, 404, path);
    t.equal((JSON.parse(res.body) as { error: string }).error, 'NOT_FOUND', path);
    t.notMatch(res.body, /not an asset|doctype/i, `${path}: nothing of the directory`);
  }
});

t.test('the files are read once: a change on disk after the first request is not served', async (t) => {
  const dir = builtConsole(t);
  const h = await apiHarness(t, { console: { dir } });
  t.equal((await h.call(null, { method: 'GET', url: '/' })).body, INDEX);
  writeFileSync(join(dir, 'index.html'), 'changed');
  writeFileSync(join(dir, 'assets/main-ABC123.js'), 'changed');
  t.equal((await h.call(null, { method: 'GET', url: '/' })).body, INDEX, 'index.html from memory');
  t.equal((await h.call(null, { method: 'GET', url: '/assets/main-ABC123.js' })).body, SCRIPT, 'the asset from memory');
});

t.test('before the console is built, a page answers 503 CONSOLE_NOT_BUILT; once built, the console', async (t) => {
  const dir = t.testdir({});
  const h = await apiHarness(t, { console: { dir } });
  const res = await h.call(null, { method: 'GET', url: '/' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error, 'CONSOLE_NOT_BUILT');
  hasConsoleHeaders(t, res.headers, '503');
  const asset = await h.call(null, { method: 'GET', url: '/assets/main-ABC123.js' });
  t.equal(asset.statusCode, 404);
  writeFileSync(join(dir, 'index.html'), INDEX);
  t.equal((await h.call(null, { method: 'GET', url: '/executions' })).body, INDEX, 'built after the daemon started');
});

t.test('/openapi.json lists none of the console paths', async (t) => {
  const h = await apiHarness(t, { console: { dir: builtConsole(t) } });
  const doc = (await h.call(null, { method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, unknown>;
  };
  const paths = Object.keys(doc.paths);
  t.ok(paths.includes('/process/instance/{id}'), 'the API is listed');
  for (const page of [...CONSOLE_PAGES, '/assets/*'])
    t.notOk(
      paths.some((p) => p === page || p === page.replace('/*', '/{*}') || p.startsWith('/assets') || p === '/'),
      `${page} is not listed`,
    );
});

t.test('the daemon finds the console npm run build made, beside its own modules', async (t) => {
  const h = await apiHarness(t);
  const page = await h.call(null, { method: 'GET', url: '/executions' });
  t.equal(page.statusCode, 200, 'dist/console/index.html is found from dist/src/daemon/api/console/');
  const scripts = [...page.body.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
  t.ok(scripts.length > 0, 'index.html loads its entry');
  for (const src of scripts) {
    t.match(src, /^\/assets\/main-[A-Z0-9]+\.js$/, 'a hashed name under /assets/');
    const asset = await h.call(null, { method: 'GET', url: src });
    t.equal(asset.statusCode, 200, `${src} is served`);
  }
  t.notMatch(page.body, /<script(?![^>]*\bsrc=)/, 'no inline script');
  t.notMatch(page.body, /<style|\sstyle=/, 'no inline style');
  t.equal(readFileSync(new URL('../../../../console/index.html', import.meta.url), 'utf8'), page.body);
});
