import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

const FLOW = `processId: 7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d
name: Sign off
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('wfx instances get names who answered each task (the key id, never the key)', async (t) => {
  const cwd = t.testdir({ 'flow.yaml': FLOW });
  await startDaemon(t, { cwd });
  const run = (...args: string[]) => wfxIn(args, { cwd });
  t.equal((await run('flow', 'publish', 'flow.yaml')).code, 0);
  const id = (await run('run', 'Sign off')).stdout.trim();

  const before = await run('instances', 'get', id);
  t.equal(before.code, 0, before.stderr);
  t.notMatch(before.stdout, 'ANSWERED BY', 'no column while nothing was answered');

  const made = await run('keys', 'create', '--name', 'ann', '--role', 'operator', '--json');
  const key = JSON.parse(made.stdout) as { keyId: string; apiKey: string };
  const answer = await wfxIn(['task', 'complete', id, 'ask', '--set', 'inputValue=ok', '--api-key', key.apiKey], {
    cwd,
  });
  t.equal(answer.code, 0, answer.stderr);

  const text = await run('instances', 'get', id);
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /^NODE\s+TYPE\s+STATUS\s+WAITING FOR\s+ANSWERED BY$/m);
  t.match(text.stdout, new RegExp(`^ask\\s+inputNode\\s+\\S+\\s+key:${key.keyId}$`, 'm'));
  t.notMatch(text.stdout, key.apiKey, 'never the key');

  const json = JSON.parse((await run('instances', 'get', id, '--json')).stdout) as {
    nodes: Array<{ nodeId: string; answeredBy?: string; answeredAt?: string }>;
  };
  const ask = json.nodes.find((n) => n.nodeId === 'ask')!;
  t.equal(ask.answeredBy, `key:${key.keyId}`);
  t.match(ask.answeredAt, /^\d{4}-\d\d-\d\dT/);
});
