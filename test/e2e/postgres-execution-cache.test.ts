import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { answerThenKill, askThenPay, type ExecutionView } from '../helpers/ask-then-pay.js';
import { callDaemon, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { foreground, serving } from '../helpers/standby.js';

// Daemons on PostgreSQL that keep no execution in memory (--execution-cache 0): each answer
// reads its execution back from its row (pg-evictable.ts), and a standby holds the rows'
// summaries, not their documents (pg-cold-rows.ts, decision 077). The serving daemon is killed
// under a load of answers; the standby takes over, every answer acknowledged is there and every
// execution goes on; a clean stop and a start read summaries alone.

const FLOW_ID = '3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d';
const STARTED = 60;
/** The serving daemon is killed once this many answers were acknowledged, the rest in flight. */
const KILL_AFTER = 20;
/**
 * The last executions started are not answered before the kill: whatever the serving daemon
 * journaled of the others before it died, these are summaries on the new owner, read back there.
 */
const UNTOUCHED = 10;

t.test(
  'executions read back from rows: kill -9 under answers, a standby takes over',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const server = await startPostgres(t);
    const url = await server.createDatabase('cache');
    const root = t.testdir();
    const [dirA, dirB] = [join(root, 'a'), join(root, 'b')];
    const args = ['--store', url, '--lease', '2s', '--execution-cache', '0'];
    const a = await startDaemon(t, { dataDir: dirA, args });
    const key = (await readFile(join(dirA, 'bootstrap.key'), 'utf8')).trim();
    // Gauges read from one scrape: two scrapes may straddle a checkpoint that moves executions
    // from resident to cold.
    const metrics = async (at: string, ...names: string[]): Promise<number[]> => {
      const text = await (await fetch(`${at}/metrics`, { headers: { 'x-api-key': key } })).text();
      return names.map((name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN));
    };
    const metric = async (at: string, name: string): Promise<number> => (await metrics(at, name))[0]!;
    const published = await callDaemon(a.url, key, 'POST', '/admin/flows', {
      source: askThenPay(FLOW_ID),
      organization: 'default',
    });
    t.equal(published.status, 200, 'published');
    const ids: string[] = [];
    for (let i = 0; i < STARTED; i++) {
      const res = await callDaemon(a.url, key, 'POST', '/process/start', {
        processId: FLOW_ID,
        correlationKey: `o-${i}`,
      });
      ids.push(res.body.processInstanceId as string);
    }
    // Written by a checkpoint as rows and at rest, they leave memory.
    await eventually('every execution cold', async () => (await metric(a.url, 'wfx_executions_cold')) === STARTED);

    const b = foreground(t, dirB, args.concat('--standby'));
    await eventually('the standby waits', () => /standing by until the lease is free/.test(b.output()));

    const answer = async (body: object) => (await callDaemon(a.url, key, 'POST', '/process/task', body)).status;
    const { answered, killed } = await answerThenKill(ids.slice(0, -UNTOUCHED), answer, KILL_AFTER, a.pid);
    t.ok(killed, `killed after ${KILL_AFTER} answers`);

    const info = await serving(dirB, 'the standby serves');
    t.match(b.output(), /took over from the copy kept while standing by/, 'from the copy it kept');
    const [resident, cold] = await metrics(info.url, 'wfx_executions_resident', 'wfx_executions_cold');
    t.equal(resident! + cold!, STARTED, 'every execution is resident or a summary');
    const lost: string[] = [];
    for (const id of ids) {
      const res = await callDaemon(info.url, key, 'GET', `/process/instance/${id}`);
      const view = res.body as unknown as ExecutionView;
      const ask = view.nodes?.find((n) => n.nodeId === 'ask');
      if (res.status !== 200) lost.push(id);
      else if (answered.includes(id) && (ask?.statusCd !== 2 || view.data.inputValue !== `a-${ids.indexOf(id)}`))
        lost.push(id);
    }
    t.same(lost, [], `each of the ${answered.length} answers acknowledged is there after the takeover`);
    t.ok(
      (await metric(info.url, 'wfx_execution_reads_total')) >= UNTOUCHED,
      'the new owner read executions back from rows',
    );

    for (const [i, id] of ids.entries()) {
      if (answered.includes(id)) continue;
      const res = await callDaemon(info.url, key, 'POST', '/process/task', {
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: `a-${i}` },
      });
      // One answered by the first daemon without its answer reaching us is waiting on `pay` already.
      t.ok(res.status === 200 || res.status === 409, `answered ${id} (${res.status})`);
    }
    // Half are paid now, by correlation key: the message finds executions that are summaries only.
    for (let i = 0; i < STARTED / 2; i++) {
      const res = await callDaemon(info.url, key, 'POST', '/process/event', {
        eventType: 'paid',
        correlationKey: `o-${i}`,
        data: {},
      });
      t.equal(res.status, 200, `paid o-${i}`);
    }
    b.child.kill('SIGTERM');
    const [code] = (await once(b.child, 'exit')) as [number | null];
    t.equal(code, 0, 'the new owner stops cleanly');

    // A start after a clean stop reads the rows' summaries, no document (default cache).
    const c = await startDaemon(t, { dataDir: dirB, args: ['--store', url, '--lease', '2s'] });
    t.equal(await metric(c.url, 'wfx_executions_resident'), 0, 'a start after a clean stop holds no execution');
    t.equal(await metric(c.url, 'wfx_executions_cold'), STARTED / 2, 'and a summary of each one waiting');
    for (let i = STARTED / 2; i < STARTED; i++) {
      const res = await callDaemon(c.url, key, 'POST', '/process/event', {
        eventType: 'paid',
        correlationKey: `o-${i}`,
        data: {},
      });
      t.equal(res.status, 200, `paid o-${i}`);
    }
    let completed = 0;
    for (const id of ids) {
      const view = (await callDaemon(c.url, key, 'GET', `/process/instance/${id}`)).body as unknown as ExecutionView;
      if (view.stateCd === 1) completed++;
    }
    t.equal(completed, STARTED, 'every execution, read back from its row, ran to its end');
  },
);
