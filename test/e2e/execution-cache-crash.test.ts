import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { answerThenKill, askThenPay, type ExecutionView } from '../helpers/ask-then-pay.js';
import { startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// A daemon that keeps no execution in memory (--execution-cache 0): each answer reads its
// execution back from its segment, each step is followed by a checkpoint and an eviction. It is
// killed under a load of answers; after the restart every answer acknowledged is there, and
// every execution goes on (at-rest/execution-cache.ts, decision 068 step 7).

const FLOW_ID = '7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
const FLOW = askThenPay(FLOW_ID);

const STARTED = 120;
/** The daemon is killed once this many answers were acknowledged, the rest in flight. */
const KILL_AFTER = 40;
/**
 * The last executions started are not answered before the kill: whatever the first daemon
 * journaled of the others before it died, these are cold after the restart, and reading them
 * back shows there.
 */
const UNTOUCHED = 10;

t.test('kill -9 while answers read executions back and evictions run: nothing acknowledged is lost', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const args = ['--execution-cache', '0'];
  const first = await startDaemon(t, { dataDir, args });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = (url: string, method: string, path: string, body?: object) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
    });
  t.ok((await call(first.url, 'POST', '/admin/flows', { source: FLOW, organization: 'default' })).ok, 'published');
  const ids: string[] = [];
  for (let i = 0; i < STARTED; i++) {
    const res = await call(first.url, 'POST', '/process/start', { processId: FLOW_ID, correlationKey: `o-${i}` });
    ids.push(((await res.json()) as { processInstanceId: string }).processInstanceId);
  }

  // Written by a checkpoint and at rest, they leave memory: each answer below reads one back.
  const metric = async (url: string, name: string): Promise<number> => {
    const text = await (await call(url, 'GET', '/metrics')).text();
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  };
  await eventually('every execution cold', async () => (await metric(first.url, 'wfx_executions_cold')) === STARTED);

  const answer = async (body: object) => (await call(first.url, 'POST', '/process/task', body)).status;
  const { answered, killed } = await answerThenKill(ids.slice(0, -UNTOUCHED), answer, KILL_AFTER, first.pid);
  t.ok(killed, `killed after ${KILL_AFTER} answers`);

  const second = await startDaemon(t, { dataDir, args });
  const lost: string[] = [];
  for (const id of ids) {
    const res = await call(second.url, 'GET', `/process/instance/${id}`);
    t.equal(res.status, 200, `${id} is there`);
    const view = (await res.json()) as ExecutionView;
    const ask = view.nodes.find((n) => n.nodeId === 'ask');
    if (answered.includes(id) && (ask?.statusCd !== 2 || view.data.inputValue !== `a-${ids.indexOf(id)}`))
      lost.push(id);
  }
  t.same(lost, [], `each of the ${answered.length} answers acknowledged is there after the restart`);
  // Those the journal after the last checkpoint changed were read back by the replay and wait for
  // the next checkpoint before they leave (all of the answered, if the kill came after their
  // journal writes); the untouched were read back by the reads above.
  t.ok(
    (await metric(second.url, 'wfx_execution_reads_total')) >= UNTOUCHED,
    'the second daemon read executions back too',
  );

  // Every execution goes on: the unanswered are answered now, then every one is paid and ends.
  for (const [i, id] of ids.entries()) {
    if (answered.includes(id)) continue;
    const res = await call(second.url, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `a-${i}` },
    });
    // One answered by the first daemon without its answer reaching us is waiting on `pay` already.
    t.ok(res.status === 200 || res.status === 409, `answered ${id} (${res.status})`);
  }
  for (let i = 0; i < STARTED; i++) {
    const res = await call(second.url, 'POST', '/process/event', {
      eventType: 'paid',
      correlationKey: `o-${i}`,
      data: {},
    });
    t.equal(res.status, 200, `paid o-${i}`);
  }
  let completed = 0;
  for (const id of ids) {
    const view = (await (await call(second.url, 'GET', `/process/instance/${id}`)).json()) as ExecutionView;
    if (view.stateCd === 1) completed++;
  }
  t.equal(completed, STARTED, 'every execution, read back from its segment, ran to its end');
});
