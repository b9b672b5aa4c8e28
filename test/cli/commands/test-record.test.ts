import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

/** Asks a person, then charges through a partner API at {env.PAYMENTS}, then waits for a message. */
const FLOW = `processId: 9a7e6fb8-c0a6-4b5d-9d82-b25ed57f8192
name: Record me
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: charge }
  charge:
    type: serviceTask
    method: POST
    url: "{env.PAYMENTS}/charge"
    retry: { maxAttempts: 2, initialInterval: 10ms }
    next: settled
  settled: { type: intermediateCatchEvent, eventType: message, messageRef: settled, next: end }
  end: { type: endEvent }
`;

t.test('wfx test record: a failed execution of a real daemon runs again as a test, to the same failure', async (t) => {
  let down = true;
  const partner = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (down) res.writeHead(503, { 'content-type': 'text/plain' }).end('partner down');
      else res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session=secret' }).end('{"id":7}');
    });
  });
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => partner.close(() => resolve())));
  const partnerUrl = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;

  const cwd = t.testdir({ 'record-me.yaml': FLOW });
  await startDaemon(t, { cwd });
  const ok = async (args: string[]): Promise<string> => {
    const r = await wfxIn(args, { cwd });
    t.equal(r.code, 0, `wfx ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  await ok(['flow', 'publish', 'record-me.yaml']);
  await ok(['env', 'set', 'PAYMENTS', partnerUrl]);

  // Fails: the partner answers 503 to both attempts.
  const failed = await ok([
    'run',
    '9a7e6fb8-c0a6-4b5d-9d82-b25ed57f8192',
    '--data',
    '{"amount":5}',
    '--correlation-key',
    'A1',
  ]);
  await ok(['task', 'complete', failed, 'ask', '--set', 'inputValue=yes']);
  const waited = await wfxIn(['logs', failed, '--follow'], { cwd });
  t.match(waited.stdout, /HTTP_503/);

  const refused = await wfxIn(['test', 'record', failed], { cwd });
  t.equal(refused.code, 0, refused.stderr);
  t.match(refused.stdout, new RegExp(`^recorded ${failed} as "recorded ${failed}": record-me\\.test\\.yaml\\n$`));
  const text = await readFile(join(cwd, 'record-me.test.yaml'), 'utf8');
  t.notMatch(text, partnerUrl, 'the environment value is not copied');
  const file = parse(text) as { flow: string; env: Record<string, string>; cases: Array<Record<string, unknown>> };
  t.equal(file.flow, 'record-me.yaml', 'the flow file it found');
  t.same(file.env, { PAYMENTS: 'https://payments.invalid' });
  t.match(file.cases[0], {
    start: { data: { amount: 5 }, correlationKey: 'A1' },
    mocks: { charge: [{ status: 503 }, { status: 503 }] },
    steps: [{ answer: { node: 'ask', data: { inputValue: 'yes' } } }],
    expect: { state: 'FAILED', path: ['start', 'ask', 'charge'], errorCode: 'HTTP_503' },
  });
  const replayed = await wfxIn(['test'], { cwd });
  t.equal(replayed.code, 0, replayed.stdout);
  t.match(replayed.stdout, /✓ recorded .*\n\n1 passed, 0 failed/);

  // A completed one, added as a second case: the partner's answer (its cookie left out), then the message.
  down = false;
  const done = await ok([
    'run',
    '9a7e6fb8-c0a6-4b5d-9d82-b25ed57f8192',
    '--data',
    '{"amount":6}',
    '--correlation-key',
    'A2',
  ]);
  await ok(['task', 'complete', done, 'ask', '--set', 'inputValue=no']);
  await ok(['event', 'send', 'settled', '--correlation-key', 'A2', '--data', '{"settledAt":"noon"}']);
  await wfxIn(['logs', done, '--follow'], { cwd });
  await ok(['test', 'record', done, '--out', 'record-me.test.yaml', '--name', 'settled']);
  const two = parse(await readFile(join(cwd, 'record-me.test.yaml'), 'utf8')) as {
    cases: Array<Record<string, unknown>>;
  };
  t.equal(two.cases.length, 2);
  t.match(two.cases[1], {
    name: 'settled',
    mocks: { charge: { status: 200, body: { id: 7 }, headers: { 'content-type': 'application/json' } } },
    steps: [
      { answer: { node: 'ask', data: { inputValue: 'no' } } },
      { event: { type: 'settled', correlationKey: 'A2', data: { settledAt: 'noon' } } },
    ],
    expect: { state: 'COMPLETED', path: ['start', 'ask', 'charge', 'settled', 'end'] },
  });
  t.notMatch(JSON.stringify(two.cases[1]), /set-cookie|session=secret/, 'no credential header');
  const both = await wfxIn(['test', '--reporter', 'tap'], { cwd });
  t.equal(both.code, 0, both.stdout);
  t.match(both.stdout, /\n1\.\.2\n/);

  const running = await ok(['run', '9a7e6fb8-c0a6-4b5d-9d82-b25ed57f8192', '--data', '{"amount":7}']);
  const early = await wfxIn(['test', 'record', running], { cwd });
  t.equal(early.code, 1);
  t.match(early.stderr, /^INSTANCE_NOT_ENDED: execution .* is still running: record it once it has ended\n/);
});
