import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { apiHarness } from '../../helpers/api.js';
import { readSse } from '../../helpers/sse.js';

/** A flow that runs nodes until the engine's cap on node instances fails it: the longest log an execution has. */
const SPIN = `processId: AUTO
name: Spin
nodes:
  start: { type: startEvent, next: again }
  again: { type: ifElse, condition: "\${true}", then: again, else: done }
  done: { type: endEvent }
`;
const READERS = 3;
/** What the stream writes in one slice (src/daemon/api/log-stream.ts). */
const SLICE_BYTES = 64 * 1024;

t.test(
  'a long log is replayed whole and in order to several readers, a slice a turn, other requests answered meanwhile',
  async (t) => {
    const h = await apiHarness(t);
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    const key = await h.key('viewer', 'default');
    const started = await h.engine.start({ processId: await h.publish(SPIN), organization: 'default' });
    const id = started.processInstanceId;
    await h.archived(id);

    // Turns of the event loop, counted by an immediate that schedules itself (one per turn).
    let turn = 0;
    let ticker = setImmediate(function tick() {
      turn++;
      ticker = setImmediate(tick);
    });
    t.teardown(() => clearImmediate(ticker));
    // What the server writes on each log stream, by turn; and the turns /health was answered in.
    const written: Array<Map<number, number>> = [];
    const healthAnswered: number[] = [];
    h.app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/health') {
        res.once('finish', () => healthAnswered.push(turn));
        return;
      }
      if (!req.url?.endsWith('/logs')) return;
      const byTurn = new Map<number, number>();
      written.push(byTurn);
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        byTurn.set(turn, (byTurn.get(turn) ?? 0) + Buffer.byteLength(chunk));
        return write(chunk);
      }) as typeof res.write;
    });

    const replays = Array.from({ length: READERS }, async () => {
      const res = await fetch(`${base}/process/instance/${id}/logs`, { headers: { 'x-api-key': key.apiKey } });
      const ids: number[] = [];
      let end = false;
      for await (const ev of readSse(res)) {
        if (ev.event === 'end') end = true;
        else if (ev.id !== undefined) ids.push(Number(ev.id));
      }
      return { ids, end };
    });
    // Requests sent while the replays run.
    let replaying = true;
    const pings = (async () => {
      const statuses: number[] = [];
      while (replaying && statuses.length < 1000) {
        const res = await fetch(`${base}/health`);
        statuses.push(res.status);
        await res.body?.cancel();
      }
      return statuses;
    })();
    const results = await Promise.all(replays);
    replaying = false;
    const statuses = await pings;
    t.ok(
      statuses.length > 0 && statuses.every((s) => s === 200),
      `/health answered ${statuses.length} times meanwhile`,
    );

    t.equal(h.store.state.instances[id], undefined, 'the log is read from history');
    const total = results[0]!.ids.length;
    t.ok(total > 100_000, `a long log (${total} entries)`);
    for (const [i, r] of results.entries()) {
      t.ok(
        r.ids.length === total && r.ids.every((n, at) => n === at + 1),
        `reader ${i + 1}: every entry once, in order`,
      );
      t.ok(r.end, `reader ${i + 1}: then end`);
    }
    t.equal(written.length, READERS);
    for (const [i, byTurn] of written.entries()) {
      const turns = [...byTurn.keys()];
      const most = Math.max(...byTurn.values());
      t.ok(
        most <= 2 * SLICE_BYTES,
        `stream ${i + 1}: at most a slice or so a turn (${most} bytes at most, over ${turns.length} turns)`,
      );
      const [first, last] = [Math.min(...turns), Math.max(...turns)];
      t.ok(
        healthAnswered.some((at) => at > first && at < last),
        `stream ${i + 1}: /health answered while it was being written`,
      );
    }
  },
);
