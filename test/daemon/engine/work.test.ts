import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE, STATUS } from '../../../src/daemon/state/state.js';
import { ended, engineHarness, trail } from '../../helpers/engine.js';

/** A local HTTP server answering with `handler`; counts requests; closed at teardown. */
async function server(t: Test, handler: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  let n = 0;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  let arrived: () => void = () => undefined;
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, ++n);
      arrived();
    });
  });
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  /** Resolves when the server has seen `count` requests. */
  const requests = (count: number) =>
    new Promise<void>((resolve) => {
      if (seen.length >= count) return resolve();
      arrived = () => seen.length >= count && resolve();
    });
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, requests };
}

const SERVICE = (url: string, extra = '', after = 'next: done') => `
processId: AUTO
name: Call
nodes:
  start: { type: startEvent, next: call }
  call:
    type: serviceTask
    method: POST
    url: "${url}/orders/{order.id}"
    headers: { x-trace: "t-{order.id}" }
    query: { verbose: true }
    body: { total: "{order.total}" }
    retry: { maxAttempts: 3, initialInterval: 10ms, backoff: 2 }
${extra}
    ${after}
  done: { type: endEvent }
`;

t.test(
  'a serviceTask calls with resolved properties; the result goes to resultVariable (default the node id)',
  async (t) => {
    const srv = await server(t, (_req, res) =>
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"accepted":true}'),
    );
    const h = await engineHarness(t);
    const pid = await h.publish(SERVICE(srv.url));
    const started = await h.start(pid, { order: { id: 7, total: 12.5 } });
    t.equal(
      Object.values(started.nodes).find((n) => n.nodeId === 'call')?.statusCd,
      STATUS.ACTIVE,
      'the node is Active while the call goes on',
    );
    const inst = await ended(h, started.processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED);
    t.match(inst.variables.call, {
      status: 201,
      body: { accepted: true },
      headers: { 'content-type': 'application/json' },
    });
    t.match(srv.seen[0], {
      method: 'POST',
      url: '/orders/7?verbose=true',
      headers: { 'x-trace': 't-7', 'content-type': /json/ },
    });
    t.same(JSON.parse(srv.seen[0]!.body), { total: 12.5 }, 'a lone reference keeps its type in the body');
  },
);

t.test('503 then 200: retried with backoff, each retry in the execution log', async (t) => {
  const srv = await server(t, (_req, res, n) =>
    n === 1 ? res.writeHead(503).end('busy') : res.writeHead(200).end('ok'),
  );
  const h = await engineHarness(t);
  const pid = await h.publish(SERVICE(srv.url, '    resultVariable: reply'));
  const inst = await ended(h, (await h.start(pid, { order: { id: 1, total: 1 } })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(srv.seen.length, 2, 'two attempts');
  t.match(inst.variables.reply, { status: 200, body: 'ok' });
  t.ok(
    logEntries(inst).some((l) => l.nodeId === 'call' && l.level === 'WARN' && /503/.test(l.message)),
    'the retry is logged',
  );
});

t.test('500 every time: the node fails after its attempts, which its node instance records', async (t) => {
  const srv = await server(t, (_req, res) => res.writeHead(500).end('down'));
  const h = await engineHarness(t);
  const pid = await h.publish(SERVICE(srv.url));
  const inst = await ended(h, (await h.start(pid, { order: { id: 1, total: 1 } })).processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'HTTP_500', nodeId: 'call' });
  t.equal(srv.seen.length, 3, 'maxAttempts: 3');
  t.equal(Object.values(inst.nodes).find((n) => n.nodeId === 'call')?.attempts, 3);
});

t.test('429 with Retry-After is honoured', async (t) => {
  const srv = await server(t, (_req, res, n) =>
    n === 1 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(200).end(),
  );
  const h = await engineHarness(t);
  const pid = await h.publish(SERVICE(srv.url));
  const inst = await ended(h, (await h.start(pid, { order: { id: 1, total: 1 } })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.ok(
    logEntries(inst).some((l) => /429/.test(l.message) && /retrying in 1000ms/.test(l.message)),
    'waited what Retry-After said, not the 10ms backoff',
  );
});

t.test(
  'a service that hangs past the timeout fails the node with HTTP_TIMEOUT; an error boundary takes it',
  async (t) => {
    const srv = await server(t, () => undefined); // never answers
    const h = await engineHarness(t);
    const failing = await h.publish(
      SERVICE(srv.url, '    timeout: 100ms\n    retry: { maxAttempts: 1 }').replace(
        /    retry: \{ maxAttempts: 3[^\n]*\n/,
        '',
      ),
    );
    const inst = await ended(h, (await h.start(failing, { order: { id: 1, total: 1 } })).processInstanceId);
    t.equal(inst.stateCd, STATE.FAILED);
    t.match(inst.error, { code: 'HTTP_TIMEOUT', nodeId: 'call' });

    const caught =
      await h.publish(`${SERVICE(srv.url, '    timeout: 100ms\n    retry: { maxAttempts: 1 }').replace(/    retry: \{ maxAttempts: 3[^\n]*\n/, '')}
  slow: { type: boundaryEvent, attachedTo: call, event: error, errorCode: HTTP_TIMEOUT, next: fallback }
  fallback: { type: setVariable, variables: { degraded: true }, next: done }
`);
    const ok = await ended(h, (await h.start(caught, { order: { id: 1, total: 1 } })).processInstanceId);
    t.equal(ok.stateCd, STATE.COMPLETED);
    t.same(trail(ok), ['start:2', 'call:3', 'slow:2', 'fallback:2', 'done:2']);
    t.equal((ok.variables.error as { code: string }).code, 'HTTP_TIMEOUT');
  },
);

t.test(
  'a status that is not accepted fails with HTTP_<status>, not retried when it is a 4xx; errorFlow takes it',
  async (t) => {
    const srv = await server(t, (_req, res) => res.writeHead(404).end('no such order'));
    const h = await engineHarness(t);
    const pid = await h.publish(`${SERVICE(srv.url, '', 'next: done\n    errorFlow: missing')}
  missing: { type: endEvent }
`);
    const inst = await ended(h, (await h.start(pid, { order: { id: 1, total: 1 } })).processInstanceId);
    t.equal(srv.seen.length, 1, 'a 404 is not retried');
    t.same(trail(inst), ['start:2', 'call:3', 'missing:2']);
    t.match(inst.variables.error, { code: 'HTTP_404', nodeId: 'call' });
  },
);

t.test('cancelling an execution aborts its call under way, and a late answer changes nothing', async (t) => {
  const srv = await server(t, () => undefined);
  const h = await engineHarness(t);
  const pid = await h.publish(SERVICE(srv.url, '    timeout: 1h'));
  const inst = await h.start(pid, { order: { id: 1, total: 1 } });
  await srv.requests(1);
  await h.engine.cancel({ organization: null, processInstanceId: inst.processInstanceId });
  const after = await h.get(inst.processInstanceId);
  t.equal(after.stateCd, STATE.CANCELLED);
  t.same(trail(after), ['start:2', 'call:4']);
});

t.test(
  'a scriptTask merges a returned object; console output goes to the log; a hostile script fails only its node',
  async (t) => {
    const h = await engineHarness(t);
    // Only the endless loop needs a short limit; the others get one no loaded machine reaches, so
    // the test does not depend on how fast a worker starts.
    const flow = (script: string, extra = '', timeout = '60s') => `
processId: AUTO
name: Script
nodes:
  start: { type: startEvent, next: run }
  run:
    type: scriptTask
    script: ${JSON.stringify(script)}
    timeout: ${timeout}
${extra}
    next: done
  done: { type: endEvent }
`;
    const good = await ended(
      h,
      (await h.start(await h.publish(flow('console.log("hi " + vars.n); return { twice: vars.n * 2 }')), { n: 21 }))
        .processInstanceId,
    );
    t.equal(good.stateCd, STATE.COMPLETED);
    t.equal(good.variables.twice, 42);
    t.ok(
      logEntries(good).some((l) => l.nodeId === 'run' && l.message === 'hi 21'),
      'console output is in the log',
    );

    const into = await ended(
      h,
      (await h.start(await h.publish(flow('return vars.n + 1', '    resultVariable: next1')), { n: 1 }))
        .processInstanceId,
    );
    t.equal(into.variables.next1, 2, 'resultVariable takes any value');

    for (const [script, code] of [
      ['while (true) {}', 'SCRIPT_TIMEOUT'],
      ['process.exit(1)', 'SCRIPT_ERROR'],
      ['return require("fs").readFileSync("/etc/passwd", "utf8")', 'SCRIPT_ERROR'],
      ['return 42', 'SCRIPT_RESULT'],
    ] as const) {
      const bad = await ended(
        h,
        (await h.start(await h.publish(flow(script, '', code === 'SCRIPT_TIMEOUT' ? '300ms' : '60s'))))
          .processInstanceId,
      );
      t.equal(bad.stateCd, STATE.FAILED, script);
      t.equal(bad.error?.code, code, `${script}: ${code}`);
    }
    const again = await ended(h, (await h.start(await h.publish(flow('return { ok: true }')))).processInstanceId);
    t.equal(again.variables.ok, true, 'the sandbox still works after hostile scripts');
  },
);

t.test(
  'a call under way when the engine stops is made again after the restart (the node is still Active)',
  async (t) => {
    let answer = false;
    const srv = await server(t, (_req, res) => {
      if (answer) res.writeHead(200).end('second time');
    });
    let h = await engineHarness(t);
    const pid = await h.publish(SERVICE(srv.url, '    timeout: 1h'));
    const inst = await h.start(pid, { order: { id: 1, total: 1 } });
    await srv.requests(1); // the call is under way: stop now
    answer = true;
    h = await h.restart();
    const done = await ended(h, inst.processInstanceId);
    t.equal(done.stateCd, STATE.COMPLETED);
    t.match(done.variables.call, { body: 'second time' });
    t.equal(srv.seen.length, 2, 'called again after the restart');
  },
);
