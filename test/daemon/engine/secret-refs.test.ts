import t from 'tap';
import {
  SecretRefs,
  withoutSecretValues,
  withSecretNames,
  withSecretValues,
} from '../../../src/daemon/engine/work/secret-refs.js';
import type { HttpCall } from '../../../src/daemon/outbound/http-request.js';

t.test('a stand-in per name and call, unforgeable, filled in everywhere the call can carry it', async (t) => {
  const refs = new SecretRefs();
  t.notOk(refs.used);
  const token = refs.token('TOKEN');
  t.equal(refs.token('TOKEN'), token, 'one stand-in a name');
  t.not(new SecretRefs().token('TOKEN'), token, "another call's differs");
  t.match(token, /^wfxsecret[0-9a-f]{24}$/);
  const key = refs.token('KEY');
  const call: HttpCall = {
    method: 'POST',
    url: `https://api.example.com/${key}/x`,
    headers: { authorization: `Bearer ${token}` },
    query: { k: key, list: [token] },
    body: { note: 'kept', nested: [{ v: `a ${token} b` }] },
    timeoutMs: 1000,
    retry: { maxAttempts: 1, initialIntervalMs: 0, backoff: 1 },
    redact: ['env-cred'],
    secrets: refs.byToken,
  };
  const values = new Map([
    [token, 'tok-1'],
    [key, 'k-2'],
  ]);
  const filled = withSecretValues(call, values);
  t.match(filled, {
    url: 'https://api.example.com/k-2/x',
    headers: { authorization: 'Bearer tok-1' },
    query: { k: 'k-2', list: ['tok-1'] },
    body: { note: 'kept', nested: [{ v: 'a tok-1 b' }] },
  });
  t.same(filled.redact, ['env-cred', 'tok-1', 'k-2'], "the values are hidden in the call's log");
  t.equal(JSON.stringify(call).includes('tok-1'), false, 'the call the step made holds no value');
  t.equal(withSecretNames(call).url, 'https://api.example.com/[secret KEY]/x', 'what a trace shows');
});

t.test('what comes back: each value written as its name, the longest first', async (t) => {
  const named = new Map([
    ['tok', 'SHORT'],
    ['tok-long', 'LONG'],
  ]);
  t.same(
    withoutSecretValues(
      { ok: true, value: { echoed: 'Bearer tok-long', list: ['tok'], tok: 1 }, logs: ['sent tok'] },
      named,
    ),
    {
      ok: true,
      value: { echoed: 'Bearer [secret LONG]', list: ['[secret SHORT]'], '[secret SHORT]': 1 },
      logs: ['sent [secret SHORT]'],
    },
  );
  t.same(withoutSecretValues({ ok: false, code: 'HTTP_500', message: 'said tok-long' }, named), {
    ok: false,
    code: 'HTTP_500',
    message: 'said [secret LONG]',
  });
});
