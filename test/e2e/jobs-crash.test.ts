import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { adminClient, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { chargeFlow } from '../helpers/jobs.js';
import { inHand, prepareWorkers, spawnWorker } from '../helpers/workers.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test(
  'SIGKILL the daemon with jobs locked: after a restart locks are honoured or lapse, each job completes once',
  async (t) => {
    const cwd = t.testdir({});
    const first = await startDaemon(t, { cwd });
    const port = new URL(first.url).port;
    let admin = await adminClient(cwd, first.url);
    const apiKey = await prepareWorkers(cwd, admin);
    const { processId } = await admin.flows.publish({ source: chargeFlow().replace('AUTO', randomUUID()) });
    const locked = async (worker: string, n: number) =>
      eventually(`${n} jobs locked by ${worker}`, async () => {
        const items = (await admin.jobs.list({ domain: 'billing' })).items.filter((j) => j.worker === worker);
        return items.length === n && items;
      });
    const start = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++)
        ids.push((await admin.process.start({ processId, data: { amount: i } })).processInstanceId);
      return ids;
    };

    // `slow` holds two jobs until SIGUSR2 (a lock long enough to outlive the restart); `holder` holds three for ever.
    const slow = spawnWorker(t, {
      cwd,
      url: first.url,
      apiKey,
      args: ['./handlers.mjs', '--name', 'slow', '--concurrency', '2', '--lock-duration', '30s'],
      env: { GATE: '1' },
    });
    const slowIds = await start(2);
    const slowJobs = await locked('slow', 2);
    for (const j of slowJobs) await inHand(slow, j.key); // not lost with an answer the kill cut off
    const holder = spawnWorker(t, {
      cwd,
      url: first.url,
      apiKey,
      args: ['./handlers.mjs', '--name', 'holder', '--concurrency', '3', '--lock-duration', '4s'],
      env: { HANG: '1' },
    });
    const holderIds = await start(3);
    const holderJobs = await locked('holder', 3);
    // The list shows a lock once applied; the worker has it once it is durable. Only those count.
    for (const j of holderJobs) await inHand(holder, j.key);

    process.kill(first.pid, 'SIGKILL');
    await eventually('the daemon is gone', () => !alive(first.pid));
    const second = await startDaemon(t, { cwd, args: ['--port', port] });
    t.equal(second.url, first.url, 'the same address: the workers reconnect by themselves');
    admin = await adminClient(cwd, second.url);

    const after = (await admin.jobs.list({ domain: 'billing' })).items;
    // The answer was made before this instant: a lock that ends later must still be held. One that
    // ended before it (a restart slower than `holder`'s 4 s on a loaded machine) may have lapsed.
    const answeredBy = Date.now();
    const lockOf = (key: string) => after.find((j) => j.key === key);
    for (const j of [...slowJobs, ...holderJobs]) {
      if (answeredBy < Date.parse(j.lockedUntil!)) {
        // Held by the same worker at least as long: a heartbeat between the list and the kill extends it.
        const now = lockOf(j.key);
        t.match(now, { state: 'locked', worker: j.worker }, 'the lock is honoured');
        t.ok(Date.parse(now?.lockedUntil ?? '') >= Date.parse(j.lockedUntil!), 'until no earlier than it was');
      } else
        t.match(lockOf(j.key), { state: /^(locked|waiting)$/ }, 'a lock that ended before the answer: held or lapsed');
    }

    slow.proc.kill('SIGUSR2');
    await eventually('slow completed its two', async () =>
      (await Promise.all(slowIds.map((id) => admin.instances.get(id)))).every((i) => i.stateCd === 1),
    );
    slow.proc.kill('SIGTERM');
    t.equal(await slow.exited, 0, 'slow stops cleanly');
    holder.proc.kill('SIGKILL');
    const next = spawnWorker(t, { cwd, url: second.url, apiKey, args: ['./handlers.mjs', '--name', 'next'] });
    await eventually('the held ones lapsed and completed', async () =>
      (await Promise.all(holderIds.map((id) => admin.instances.get(id)))).every((i) => i.stateCd === 1),
    );
    for (const id of [...slowIds, ...holderIds]) {
      const inst = await admin.instances.get(id);
      t.equal(inst.nodes.filter((n) => n.nodeId === 'charge' && n.statusCd === 2).length, 1, `${id}: charged once`);
      t.match(inst.data.charge, { worker: slowIds.includes(id) ? 'slow' : 'next' });
    }
    const completions = () =>
      [slow, next].flatMap((w) => w.events.filter((e) => e.type === 'completed').map((e) => e.job!.key));
    // A worker says it completed a job once the daemon's answer reaches it: after the execution moved on.
    await eventually('the workers report their completions', () => completions().length >= 5);
    const completed = completions();
    t.equal(completed.length, 5, 'five completions in all');
    t.equal(new Set(completed).size, 5, 'none twice');
    t.same((await admin.jobs.list({})).items, [], 'no job left');
    next.proc.kill('SIGTERM');
    await next.exited;
  },
);
