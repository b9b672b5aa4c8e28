import t from 'tap';
import { calls, links, sent, streams, type Call } from '../../../src/shared/api/calls/index.js';

/** An id holding every character a path or query would take for its own. */
const ODD = 'a/b?c#d e%';
const ENCODED = encodeURIComponent(ODD);

t.test('every call puts its parameters in encoded: none reaches the path as it is', async (t) => {
  let encoded = 0;
  let counted = 0;
  for (const [group, fns] of Object.entries(calls)) {
    const entries: [string, unknown][] = typeof fns === 'function' ? [[group, fns]] : Object.entries(fns);
    for (const [name, fn] of entries) {
      const make = fn as (...args: unknown[]) => Call<unknown>;
      const call = make(...Array.from({ length: make.length }, () => ODD));
      counted++;
      t.ok(call.path.startsWith('/'), `${group}.${name}: ${call.path}`);
      t.notOk(call.path.includes(ODD), `${group}.${name} encodes what it is given: ${call.path}`);
      if (call.path.includes(ENCODED)) encoded++;
    }
  }
  t.ok(counted > 80, `every call was made (${counted})`);
  t.ok(encoded > 40, `the calls with a path parameter put it in encoded (${encoded})`);
});

t.test('a call is its route: method, path with its query, body', async (t) => {
  t.same(calls.instances.get(ODD), { method: 'GET', path: `/process/instance/${ENCODED}` });
  t.same(calls.memory.get('n/s', 'k?1', { organization: 'o&p' }), {
    method: 'GET',
    path: '/admin/memory/n%2Fs/k%3F1?organization=o%26p',
  });
  t.same(
    calls.instances.cancel('x'),
    { method: 'POST', path: '/process/instance/x/cancel', body: {} },
    'a POST without a body sends {}',
  );
  t.same(calls.keys.setStatus('k 1', 'suspend'), { method: 'POST', path: '/admin/api-keys/k%201/suspend', body: {} });
  t.same(calls.memory.delete('n', 'k'), { method: 'DELETE', path: '/admin/memory/n/k' }, 'a DELETE sends no body');
  t.same(calls.instances.search({ parentId: ODD, limit: 20, cursor: undefined }), {
    method: 'GET',
    path: `/process/instances?parentId=a%2Fb%3Fc%23d+e%25&limit=20`,
  });
  t.same(calls.bulk.create({ operation: 'cancel', query: {}, dryRun: true, sample: 5 }).body, {
    operation: 'cancel',
    query: {},
  });
  t.same(calls.bulk.dryRun({ operation: 'cancel', query: {} }).body, { operation: 'cancel', query: {}, dryRun: true });
  t.equal(streams.logs(ODD, { follow: true }), `/process/instance/${ENCODED}/logs?follow=true`);
  t.equal(streams.deliveries('w/1'), '/admin/webhooks/w%2F1/deliveries/stream');
  t.equal(links.login('/executions?state=FAILED'), '/auth/login?returnTo=%2Fexecutions%3Fstate%3DFAILED');
});

t.test('sent() sends each call through the transport it is given, read at each call', async (t) => {
  const seen: Call<unknown>[] = [];
  let answer = 'first';
  const keys = sent(calls.keys, async (call) => {
    seen.push(call);
    return answer as never;
  });
  t.equal(await keys.get('k/1'), 'first');
  answer = 'second';
  t.equal(await keys.list({ organization: 'o' }), 'second');
  t.same(seen, [
    { method: 'GET', path: '/admin/api-keys/k%2F1' },
    { method: 'GET', path: '/admin/api-keys?organization=o' },
  ]);
});
