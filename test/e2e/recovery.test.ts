import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';

const FLOW_ID = '5e0c7a10-56aa-4e1b-9a2f-0f3c1d2e4b56';

/** Charges through a partner API: fails while the partner is down, or with a bad token. */
const CHARGE = `processId: ${FLOW_ID}
name: Charge
nodes:
  start: { type: startEvent, next: prep }
  prep: { type: setVariable, variables: { amount: "{qty}" }, next: call }
  call:
    type: serviceTask
    url: "{env.BASE}/charge/{token}"
    retry: { maxAttempts: 2, initialInterval: 10ms }
    resultVariable: reply
    next: done
  done: { type: endEvent }
`;

interface View {
  processInstanceId: string;
  stateCd: number;
  data: Record<string, unknown> & { error?: { code: string; nodeId: string } };
  retries?: { by: string; error: { code: string }; set?: string[] }[];
  replayOf?: { processInstanceId: string; nodeId: string };
  nodes: { nodeId: string; statusCd: number }[];
}

t.test('a serviceTask failed for good is retried after the partner is back, with a new token, same id', async (t) => {
  let up = false;
  const calls: string[] = [];
  const srv = createServer((req, res) => {
    calls.push(req.url ?? '');
    if (!up) return res.writeHead(503).end();
    if (req.url !== '/charge/good') return res.writeHead(401).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"charged":true}');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => srv.close());
  const cwd = t.testdir({ 'charge.yaml': CHARGE });
  const info = await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'charge.yaml'])).code, 0);
  t.equal((await run(['env', 'set', 'BASE', `http://127.0.0.1:${(srv.address() as AddressInfo).port}`])).code, 0);

  const first = await run(['run', FLOW_ID, '--set', 'token=old', '--set', 'qty=3', '--wait', '--json']);
  t.equal(first.code, 1, 'the execution failed');
  const failed = JSON.parse(first.stdout) as View;
  const id = failed.processInstanceId;
  t.match(failed.data.error, { code: 'HTTP_503', nodeId: 'call' });

  const stillDown = await run(['instances', 'retry', id, '--wait', '--json']);
  t.equal(stillDown.code, 1, 'retried while the partner is still down, it fails again');

  up = true;
  const fixed = await run(['instances', 'retry', id, '--set', 'token=good', '--wait', '--json']);
  t.equal(fixed.code, 0, fixed.stderr);
  const done = JSON.parse(fixed.stdout) as View;
  t.equal(done.processInstanceId, id, 'the same execution');
  t.equal(done.stateCd, 1);
  t.match(done.data, { reply: { status: 200, body: { charged: true } }, amount: 3, token: 'good' });
  t.match(
    done.retries,
    [
      { by: /^key:/, error: { code: 'HTTP_503' } },
      { by: /^key:/, error: { code: 'HTTP_503' }, set: ['token'] },
    ],
    'who retried, after which failure, with what set',
  );
  t.same(done.nodes.filter((n) => n.nodeId === 'prep').length, 1, 'what ran before the failure ran once');
  t.same(
    done.nodes.filter((n) => n.nodeId === 'call').map((n) => n.statusCd),
    [3, 3, 2],
    'each attempt of the node is a node instance',
  );
  const logs = await run(['logs', id]);
  t.match(logs.stdout, /execution failed: HTTP_503/);
  t.match(logs.stdout, /execution retried by key:\S+ with token set \(attempt 3, after HTTP_503 at call\)/);

  const again = await run(['instances', 'retry', id]);
  t.equal(again.code, 1);
  t.match(again.stderr, /INSTANCE_NOT_FAILED/, 'a completed execution is not retried');

  // Replay from the middle: the variables as they were when the original last entered the node.
  const replay = await run(['instances', 'replay', id, '--from', 'prep', '--wait', '--json']);
  t.equal(replay.code, 1, 'the original entered prep with the old token: the replay fails as it first did');
  const replayed = JSON.parse(replay.stdout) as View;
  t.not(replayed.processInstanceId, id);
  t.match(replayed.replayOf, { processInstanceId: id, nodeId: 'prep' });
  t.match(replayed.data, { token: 'old', amount: 3, qty: 3 });
  t.same(
    replayed.nodes.map((n) => n.nodeId),
    ['prep', 'call'],
    'it starts at the node',
  );
  const fromCall = await run(['instances', 'replay', id, '--from', 'call', '--wait', '--json']);
  t.equal(fromCall.code, 0, 'call was last entered with the good token');
  t.match(JSON.parse(fromCall.stdout), { data: { token: 'good' } });
  const withToken = await run(['instances', 'replay', id, '--from', 'prep', '--set', 'token=good', '--wait']);
  t.equal(withToken.code, 0, withToken.stderr);

  // Over HTTP: the codes, and a viewer may not retry.
  const key = JSON.parse((await run(['keys', 'create', '--name', 'v', '--role', 'viewer', '--json'])).stdout) as {
    apiKey: string;
  };
  const post = (path: string, body: object, apiKey = key.apiKey) =>
    fetch(`${info.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const refused = await post(`/process/instance/${id}/retry`, {});
  t.equal(refused.status, 403, 'a viewer may not retry');
  const missing = await run(['instances', 'replay', id, '--from', 'nowhere']);
  t.match(missing.stderr, /NODE_NOT_FOUND/);
  t.ok(calls.length >= 6, 'the partner was called for every attempt');
});
