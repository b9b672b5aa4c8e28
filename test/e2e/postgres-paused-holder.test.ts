import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { askFlow, callDaemon, holdings, launchSharing, printLogs, serving } from '../helpers/share.js';
import { readSse } from '../helpers/sse.js';

/*
 * A daemon that stops answering at all (its process paused, as a VM freeze or a long GC pause
 * does, or its host gone from the network) while requests are forwarded to it (issue #83): the
 * daemon that forwarded them ends them once the paused one's lease lapses and another holds its
 * partitions, rather than waiting on a connection that may never answer; and the paused daemon,
 * resumed, finds its lease gone and comes back without exiting.
 */

const ASK_ID = '5e6f7081-92a3-4b4c-8d5e-6f708192a3b4';
const LEASE_MS = 2_000;

t.test(
  'requests forwarded to a daemon that is paused end within three lease periods, and it comes back',
  { skip: POSTGRES_SKIP, timeout: 180_000 },
  async (t) => {
    const server = await startPostgres(t);
    const store = await server.createDatabase('paused');
    const root = t.testdir();
    // `first` holds partition 0 (it started first) and keeps running: it takes the paused
    // one's partitions without a restart of its own, so only the forwards' bounds end them.
    const first = await launchSharing(t, join(root, 'first'), store);
    await eventually('first serves', () => serving(first));
    const key = (await readFile(join(first.dir, 'bootstrap.key'), 'utf8')).trim();
    const published = await callDaemon(first, key, 'POST', '/admin/flows', {
      source: askFlow(ASK_ID),
      organization: 'default',
    });
    t.equal(published.status, 200);
    const paused = await launchSharing(t, join(root, 'paused'), store);
    t.teardown(async () => {
      if (paused.child.exitCode === null && paused.child.signalCode === null) paused.child.kill('SIGCONT');
      if (!t.passing()) await printLogs([first.dir, paused.dir]);
    });
    await eventually(
      'the two share the partitions, partition 0 with the first',
      async () => {
        const held = await holdings(first, key);
        return (held.get(paused.url)?.length ?? 0) >= 7 && held.get(first.url)?.includes(0) && serving(paused);
      },
      { withinMs: 30_000 },
    );

    // A start drawn here is in a partition this daemon holds: a request for it sent to the
    // first daemon is forwarded.
    const started = await callDaemon(paused, key, 'POST', '/process/start', { processId: ASK_ID, data: {} });
    t.equal(started.status, 200);
    const id = started.body.processInstanceId as string;
    const logs = await fetch(`${first.url}/process/instance/${id}/logs`, {
      headers: { 'x-api-key': key, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(60_000),
    });
    t.equal(logs.status, 200, 'its log stream, forwarded to the daemon holding it, is open');
    const events = readSse(logs);
    t.ok((await events.next()).value, 'and streams');

    const pausedAt = Date.now();
    paused.child.kill('SIGSTOP');
    // Sent right after the pause, while the first daemon still reads the paused one as the holder.
    const read = fetch(`${first.url}/process/instance/${id}`, {
      headers: { 'x-api-key': key },
      signal: AbortSignal.timeout(60_000),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: string }, at: Date.now() }));

    let streamEndedAt = 0;
    try {
      while (!(await events.next()).done);
      streamEndedAt = Date.now();
    } catch {
      streamEndedAt = Date.now(); // cut off: as much an end as a closed stream
    }
    const bound = 3 * LEASE_MS + 500;
    t.ok(streamEndedAt - pausedAt <= bound, `the forwarded log stream ended ${streamEndedAt - pausedAt} ms in`);
    const answer = await read;
    t.ok(answer.at - pausedAt <= bound, `the forwarded read was answered ${answer.at - pausedAt} ms in`);
    t.ok(
      answer.status === 200 || answer.body.error === 'PARTITION_MOVING',
      `with the execution or PARTITION_MOVING (${answer.status} ${answer.body.error ?? ''})`,
    );

    const again = await callDaemon(first, key, 'GET', `/process/instance/${id}`);
    t.equal(again.status, 200, 'the first daemon serves the execution now');
    const answered = await callDaemon(first, key, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'yes' },
    });
    t.equal(answered.status, 200, 'and takes its answer');

    paused.child.kill('SIGCONT');
    // Right after it resumes it may answer from before the pause until its timers run: what
    // counts is that it takes a share again, and serves it.
    await eventually(
      'the resumed daemon shares the partitions again, and serves',
      async () => ((await holdings(first, key)).get(paused.url)?.length ?? 0) >= 7 && serving(paused),
      { withinMs: 60_000 },
    );
    t.equal(paused.child.exitCode, null, 'it never exited');
    const done = await callDaemon(paused, key, 'GET', `/process/instance/${id}`);
    t.equal(done.status, 200, `read through it: ${JSON.stringify(done.body).slice(0, 200)}`);
    t.equal(done.body.state, 'COMPLETED', 'the answer taken while it was paused stands');
  },
);
