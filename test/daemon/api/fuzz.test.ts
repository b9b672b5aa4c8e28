import t from 'tap';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import { apiHarness } from '../../helpers/api.js';
import { prng } from '../../helpers/prng.js'; // a failure can be replayed from its seed

const STRINGS = [
  '',
  ' ',
  'a',
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '../../etc/passwd',
  '%00',
  '\u0000',
  '\ud800',
  '💥',
  '<script>',
  "'; DROP TABLE",
  '${7*7}',
  '{x}',
  'COMPLETE',
  'CANCEL',
  'PRODUCTION',
  '__proto__',
  'constructor',
];
const KEYS = [
  'processId',
  'correlationKey',
  'data',
  'action',
  'nodeId',
  'processInstanceId',
  'eventType',
  'ttlSeconds',
  'messageId',
  'name',
  'role',
  'system',
  'organization',
  'source',
  'definition',
  'environment',
  'version',
  'value',
  'rateLimitPerMinute',
  'expiresAt',
  'expiresIn',
  '__proto__',
  'constructor',
  'x',
];

function value(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * (depth > 2 ? 6 : 9));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 7][Math.floor(r() * 7)];
    case 3:
      return STRINGS[Math.floor(r() * STRINGS.length)];
    case 4:
      return 'x'.repeat(Math.floor(r() * 5000));
    case 5:
      return String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(r() * 0xffff)));
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    default: {
      // Own properties, so that "__proto__" and "constructor" really go over the wire as keys.
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 5); i > 0; i--) {
        Object.defineProperty(o, KEYS[Math.floor(r() * KEYS.length)]!, {
          value: value(r, depth + 1),
          enumerable: true,
          configurable: true,
          writable: true,
        });
      }
      return o;
    }
  }
}

/** Any generated value as text. */
const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** encodeURIComponent for any string (lone surrogates cannot be encoded: replace them). */
const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'));

/** The fuzz's body limit: bodies are generated on both sides of it. */
const BODY_LIMIT = 64 * 1024;

/**
 * Generators of a request body, one a line: a new kind of malformed body is one more line (each
 * is picked as often as the others). `pid` is a published flow's processId.
 */
const BODIES: ReadonlyArray<(r: () => number, pid: string) => string> = [
  (r) => JSON.stringify(value(r)),
  (r) => JSON.stringify(value(r)),
  (r, pid) => `{"processId": "${pid}", "data": ${JSON.stringify(value(r))}`, // cut short
  (r) => text(value(r)),
  (r, pid) => JSON.stringify({ processId: pid, data: { s: 'y'.repeat(Math.floor(r() * BODY_LIMIT * 0.9)) } }), // within the limit
  (r, pid) => JSON.stringify({ processId: pid, data: { s: 'z'.repeat(BODY_LIMIT + Math.floor(r() * BODY_LIMIT)) } }), // past it
  (_r, pid) =>
    `{"processId": "${pid}", "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}`,
  () => '',
  (r) => `${JSON.stringify(value(r))}${JSON.stringify(value(r))}`, // two documents
  (r) => JSON.stringify(value(r)).replace(/"/g, "'"),
  (r, pid) => `{"processId": "${pid}", "data": {"more": ${deep(r)}}}`, // nested past the depth limit
  (r) => deep(r),
];

/** JSON text of arrays or objects nested 60 to 5,060 deep (the default limit is 64), built as text: stringify would recurse. */
function deep(r: () => number): string {
  const n = 60 + Math.floor(r() * 5000);
  return r() < 0.5 ? `${'['.repeat(n)}1${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
}

/** Content types, odd ones included. */
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  '',
  'application/JSON',
  'application/json, text/plain',
  '*/*',
  'application/json; charset',
];

/** Headers besides the credential and content type, odd ones included. */
const ODD_HEADERS: ReadonlyArray<(r: () => number) => Record<string, string | string[]>> = [
  () => ({}),
  () => ({ 'content-encoding': 'gzip' }),
  () => ({ 'content-encoding': 'br, identity' }),
  () => ({ 'transfer-encoding': 'identity' }),
  () => ({ accept: 'text/html' }),
  () => ({ 'accept-encoding': 'x-unknown' }),
  () => ({ 'x-api-key': '' }),
  () => ({ authorization: '' }),
  () => ({ authorization: 'Basic Zm9vOmJhcg==' }),
  (r) => ({
    'x-request-id': text(value(r))
      .replace(/[^\x20-\x7e]/g, '')
      .slice(0, 200),
  }),
  () => ({ 'x-api-key': [`apk_${'0'.repeat(16)}_${'A'.repeat(43)}`, 'second'] }),
  () => ({ 'content-type': ['application/json', 'text/plain'] }),
];

t.test('thousands of malformed requests against every route: no 5xx, well-formed errors, healthy after', async (t) => {
  const h = await apiHarness(t, { bodyLimit: BODY_LIMIT });
  const admin = await h.key('admin', 'default');
  const system = await h.key('admin', null);
  const pid = await h.publish(`processId: AUTO
name: F
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: form, fields: [{ name: n, type: number }], next: done }
  done: { type: endEvent }
`);
  const running = await h.engine.start({ processId: pid, organization: 'default' });
  const doc = (await h.call(null, { method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })),
  );
  // Streams that never end on their own are fuzzed on their error paths only.
  const r = prng(20261121);
  const ids = [
    pid,
    running.processInstanceId,
    admin.keyId,
    'nope',
    '',
    '%2e%2e',
    'x'.repeat(300),
    '💥',
    'PRODUCTION',
    'DEVELOPMENT',
  ];
  let count = 0;
  const bad: string[] = [];
  for (let i = 0; i < 6000; i++) {
    const route = routes[Math.floor(r() * routes.length)]!;
    if (route.path === '/events') continue;
    let url = route.path.replace(/\{(\w+)\}/g, () => enc(ids[Math.floor(r() * ids.length)]!));
    if (route.path === '/process/instance/{id}/logs' && url.includes(running.processInstanceId))
      url = '/process/instance/nope/logs';
    if (r() < 0.3)
      url += `?${['limit', 'cursor', 'stateCd', 'environment', 'versionNumber', 'organization', 'version'][Math.floor(r() * 7)]}=${enc(text(value(r)))}`;
    const headers: Record<string, string | string[]> = {};
    const who = r();
    if (who < 0.45) headers['x-api-key'] = admin.apiKey;
    else if (who < 0.7) headers['x-api-key'] = system.apiKey;
    else if (who < 0.8) headers['x-api-key'] = `apk_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    else if (who < 0.85) headers.authorization = `Bearer ${text(value(r))}`;
    else if (who < 0.9) headers['x-api-key'] = text(value(r)).replace(/[^\x20-\x7e]/g, '');
    if (r() < 0.1) headers['last-event-id'] = text(value(r)).replace(/[^\x20-\x7e]/g, '');
    let payload: string | undefined;
    if (route.method !== 'GET' && route.method !== 'DELETE') {
      payload = BODIES[Math.floor(r() * BODIES.length)]!(r, pid);
      headers['content-type'] = CONTENT_TYPES[Math.floor(r() * CONTENT_TYPES.length)]!;
    }
    if (r() < 0.2) Object.assign(headers, ODD_HEADERS[Math.floor(r() * ODD_HEADERS.length)]!(r));
    const res = await h.app.inject({ method: route.method as 'GET', url, headers, payload });
    count++;
    if (res.statusCode >= 500 && !(res.statusCode === 503 && res.json().error === 'SERVICE_UNAVAILABLE'))
      bad.push(`${route.method} ${url} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
    else if (res.statusCode >= 400) {
      let body: { error?: unknown; timestamp?: unknown };
      try {
        body = res.json();
      } catch {
        bad.push(`${route.method} ${url} -> ${res.statusCode} with a body that is not JSON`);
        continue;
      }
      // /mcp answers as the MCP transport does, with a JSON-RPC error, once past authentication's refusals.
      const rpc = body as { jsonrpc?: unknown; error?: { code?: unknown } };
      if (route.path === '/mcp' && rpc.jsonrpc === '2.0' && typeof rpc.error?.code === 'number') continue;
      if (typeof body.error !== 'string' || typeof body.timestamp !== 'string')
        bad.push(`${route.method} ${url} -> ${res.statusCode} without the error body`);
      else if (!(body.error in ERROR_CODES))
        bad.push(`${route.method} ${url} -> ${res.statusCode} with ${body.error}, not a catalogue code`);
      // A stack frame names a source file and line ("at fn (file.js:1:2)"); a message's "at body.a" and a timestamp's 04:53:54 do not.
      if (/\bat [^"]*\.[cm]?[jt]s:\d+:\d+/.test(res.body))
        bad.push(`${route.method} ${url} -> a stack trace on the wire: ${res.body.slice(0, 300)}`);
    }
  }
  t.same(bad.slice(0, 10), [], `${count} malformed requests, none answered 5xx or without the error body`);
  const health = await h.call(null, { method: 'GET', url: '/health' });
  t.equal(health.statusCode, 200, 'healthy after');
  t.equal(h.store.failed, null, 'the store never failed');
  // (The fuzzer may have revoked `admin`: its key id is among the path values it tries.)
  const checker = await h.key('viewer', 'default');
  const still = await h.call(checker, { method: 'GET', url: `/process/instance/${running.processInstanceId}` });
  t.equal(still.statusCode, 200, `and still serving what it had: ${still.body.slice(0, 200)}`);
});
