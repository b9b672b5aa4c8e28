import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import type { TriggerList } from '../../src/shared/api/index.js';
import { callDaemon, spawnWfx, wfxIn } from '../helpers/cli.js';

const PR_FLOW = `processId: 3c4d5e6f-7081-4a92-8b3c-4d5e6f708192
name: On PR
triggers:
  - { type: webhook, webhook: github, eventType: pull_request }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('the webhook loop of docs/triggers.md starts an execution under wfx dev', async (t) => {
  const cwd = t.testdir({ flows: {}, 'pr.json': JSON.stringify({ action: 'opened', number: 7 }) });
  const child = spawnWfx(t, ['dev', '--port', '0'], { cwd });
  const exited = once(child, 'exit');
  let sent: Awaited<ReturnType<typeof wfxIn>> | null = null;
  let created: Awaited<ReturnType<typeof wfxIn>> | null = null;
  const steps = [
    {
      // 1. `wfx dev`; 2. `wfx webhooks create`; 4. the flow whose trigger names it, saved under flows/.
      until: /wfx dev: daemon on http:\/\/127\.0\.0\.1:\d+/,
      then: async () => {
        created = await wfxIn(['webhooks', 'create', '--name', 'github', '--provider', 'GITHUB'], { cwd });
        await writeFile(join(cwd, 'flows', 'pr.yaml'), PR_FLOW);
      },
    },
    {
      // 5. A test delivery, signed as GitHub would.
      until: /published "On PR" \(version 1\) to DEVELOPMENT/,
      then: async () => {
        sent = await wfxIn(['webhooks', 'send', 'github', '--payload', 'pr.json', '--event', 'pull_request'], { cwd });
        child.kill('SIGINT');
      },
    },
  ];
  let step = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    if (steps[step]!.until.test(line)) await steps[step++]!.then();
    if (step === steps.length) break;
  }
  t.equal(step, steps.length, 'every step was seen');
  t.match(created, { code: 0, stdout: /^ALL\n {2}url {5}http:\/\/127\.0\.0\.1:\d+\/webhook\/receive\/wht_/ });
  t.match(
    sent,
    { code: 0, stdout: /^delivered pull_request \S+ to the ALL endpoint: started [0-9a-f-]{36}\n$/ },
    'the send started an execution',
  );
  await exited;
  t.equal(child.exitCode, 0, 'Ctrl-C stops it gracefully');
});

t.test('under wfx dev the DEVELOPMENT trigger of a SHARED registration is active, and fires', async (t) => {
  const cwd = t.testdir({ flows: {}, 'pr.json': JSON.stringify({ action: 'opened', number: 8 }) });
  const child = spawnWfx(t, ['dev', '--port', '0'], { cwd });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const until = async (re: RegExp) => {
    for (let r = await lines.next(); !r.done; r = await lines.next()) {
      const m = re.exec(r.value);
      if (m) return m;
    }
    throw new Error(`wfx dev ended before printing ${re}`);
  };
  const url = (await until(/wfx dev: daemon on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  t.equal((await wfxIn(['webhooks', 'create', '--name', 'github', '--provider', 'GITHUB'], { cwd })).code, 0);
  await writeFile(join(cwd, 'flows', 'pr.yaml'), PR_FLOW);
  await until(/published "On PR" \(version 1\) to DEVELOPMENT/);
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const health = async () =>
    ((await callDaemon(url, key, 'GET', '/admin/triggers')).body as unknown as TriggerList).items.filter(
      (x) => x.type === 'webhook',
    );
  t.match(await health(), [{ environment: 'DEVELOPMENT', state: 'active', lastFire: null }]);
  const sent = await wfxIn(
    ['webhooks', 'send', 'github', '--payload', 'pr.json', '--event', 'pull_request', '--json'],
    { cwd },
  );
  t.equal(sent.code, 0, sent.stderr);
  const record = JSON.parse(sent.stdout) as { receivedAt: string; startedInstanceIds: string[] };
  t.equal(record.startedInstanceIds.length, 1);
  t.match(await health(), [{ environment: 'DEVELOPMENT', state: 'active', lastFire: record.receivedAt }]);
  child.kill('SIGINT');
  await exited;
});
