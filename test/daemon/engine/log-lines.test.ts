// A serviceTask's log lines, from the work runner's calls. What a step logs of a gateway's
// decision is in step/log-lines.test.ts.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { ended, engineHarness } from '../../helpers/engine.js';

/** The messages of node `nodeId`'s log lines. */
const linesOf = (inst: Parameters<typeof logEntries>[0], nodeId: string): string[] =>
  logEntries(inst)
    .filter((l) => l.nodeId === nodeId)
    .map((l) => l.message);

/** A local server answering 200 (500 under /fail), closed at teardown. */
async function server(t: Test): Promise<string> {
  const s = createServer((req, res) =>
    res.writeHead(req.url!.startsWith('/fail') ? 500 : 200, { 'content-type': 'application/json' }).end('{}'),
  );
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

t.test('a serviceTask logs method, address, status and time; credentials never reach the log', async (t) => {
  const url = await server(t);
  const h = await engineHarness(t);
  await h.store.commit({
    type: 'env.set',
    organization: 'default',
    environment: 'PRODUCTION',
    name: 'BOT_TOKEN',
    value: 'tok-s3cr3t-42',
  });
  const pid = await h.publish(`
processId: AUTO
name: Call
nodes:
  start: { type: startEvent, next: call }
  call:
    type: serviceTask
    method: GET
    url: "${url}/bot{env.BOT_TOKEN}/orders/{id}"
    headers: { authorization: "Bearer {env.BOT_TOKEN}" }
    query: { api_key: "k-hidden-7", page: 2 }
    next: done
  done: { type: endEvent }
`);
  const inst = await ended(h, (await h.start(pid, { id: 42 })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  const lines = linesOf(inst, 'call');
  t.ok(
    lines.some((m) =>
      new RegExp(`^GET ${url}/bot\\*\\*\\*/orders/42\\?api_key=\\*\\*\\*&page=2 → 200 in \\d+ ms$`).test(m),
    ),
    lines.join('\n'),
  );
  const all = JSON.stringify(logEntries(inst));
  t.notMatch(all, /tok-s3cr3t-42/, 'the environment credential is never logged');
  t.notMatch(all, /k-hidden-7/, 'a credential-looking query parameter is never logged');
});

t.test('a failing serviceTask logs its code and attempts; the credential stays out of its failure', async (t) => {
  const url = await server(t);
  const h = await engineHarness(t);
  await h.store.commit({
    type: 'env.set',
    organization: 'default',
    environment: 'PRODUCTION',
    name: 'API_KEY',
    value: 'zz-key-9',
  });
  const pid = await h.publish(`
processId: AUTO
name: Fail
nodes:
  start: { type: startEvent, next: call }
  call:
    type: serviceTask
    url: "${url}/fail/{env.API_KEY}"
    retry: { maxAttempts: 2, initialInterval: 1ms }
    next: done
  done: { type: endEvent }
`);
  const inst = await ended(h, (await h.start(pid)).processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'HTTP_500', nodeId: 'call' });
  const lines = linesOf(inst, 'call');
  t.ok(
    lines.some((m) => /^attempt 2: HTTP 500, giving up$/.test(m)),
    lines.join('\n'),
  );
  t.ok(
    lines.some((m) => m.startsWith(`failed: HTTP_500: GET ${url}/fail/*** answered 500`)),
    lines.join('\n'),
  );
  t.notMatch(JSON.stringify({ logs: logEntries(inst), error: inst.error }), /zz-key-9/);
});
