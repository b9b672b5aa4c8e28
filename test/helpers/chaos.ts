import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { RETRIES, retryPause } from '../../src/client/http.js';
import { spawnWfx } from './cli.js';
import { eventually } from './eventually.js';
import { startPostgres } from './postgres.js';
import { prng } from './prng.js';
import { askFlow, waitForGoFlow } from './share.js';

/*
 * Three daemons on one database, as a supervisor runs them (restarted when they die), under a
 * load of starts, task answers, events and timers sent to any of them, and a daemon SIGKILLed at
 * a random moment of each round, several rounds: every acknowledged start, answer and event is
 * there at the end, every execution finishes as it should on the daemon that took over, no node
 * runs twice, and no schedule fires twice for one minute. With `--standby` one daemon serves and
 * the serving one is killed; with `--share` all three hold partitions and any one is killed. A
 * call answered "try again after Retry-After" is sent again as the wfx client sends it (its
 * retryPause), an event too, which that client leaves to its sender: these carry a message id,
 * which makes a second send safe.
 */

const ASK_ID = '6a0f1e2d-3c4b-4a59-8e7f-0a1b2c3d4e5f';
const EVENT_ID = '7b1e2d3c-4b5a-4968-9f8e-1b2c3d4e5f60';
const TIMER_ID = '8c2d3e4f-5a6b-4c7d-8e9f-2c3d4e5f6a71';
const TICK_ID = '9d3e4f5a-6b7c-4d8e-9fa0-3d4e5f6a7b82';
const FLOWS = [
  askFlow(ASK_ID),
  waitForGoFlow(EVENT_ID),
  `processId: ${TIMER_ID}
name: Nap
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1s, next: done }
  done: { type: endEvent }
`,
  `processId: ${TICK_ID}
name: Every minute
triggers:
  - { type: schedule, cron: "* * * * *" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`,
];

const ROUNDS = 6;
const OPS_PER_ROUND = 40;
const CONCURRENCY = 3;

/** How the daemons share the database: one serving and the others standing by, or all sharing it. */
export type ChaosMode = '--standby' | '--share';

interface Slot {
  readonly dir: string;
  child: ChildProcess | null;
  url: string | null;
}

/**
 * Starts the slot's daemon as a supervisor would: in the foreground (`--standby`: a standby until
 * the lease is free), the store in its environment (kept off `ps`).
 */
function launch(t: Test, slot: Slot, store: string, mode: ChaosMode): void {
  const args = ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', slot.dir, mode, '--lease', '2s'];
  const child = spawnWfx(t, args, { env: { WFX_STORE: store } });
  // Its readable log lines are not read here (the daemon log has them): drained, so it never blocks on them.
  child.stdout.resume();
  child.stderr.resume();
  slot.child = child;
  slot.url = null;
}

/** The URL of the slot's current process, once it listens (daemon.json names it). */
async function listening(slot: Slot): Promise<string> {
  const pid = slot.child!.pid;
  const url = await eventually(`daemon ${slot.dir} listens`, async () => {
    const info = JSON.parse(await readFile(join(slot.dir, 'daemon.json'), 'utf8')) as { pid: number; url: string };
    return info.pid === pid && info.url;
  });
  slot.url = url;
  return url;
}

async function healthOf(url: string): Promise<string> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as { status: string }).status;
}

/** Runs the rounds (see the top of this file) with daemons started with `mode`. */
export async function runChaos(t: Test, mode: ChaosMode): Promise<void> {
  const server = await startPostgres(t);
  const store = await server.createDatabase('cluster');
  const root = t.testdir();
  const seed = Number(process.env.WFX_CHAOS_SEED ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed} (WFX_CHAOS_SEED repeats a run)`);
  const rand = prng(seed);
  const slots: Slot[] = ['a', 'b', 'c'].map((name) => ({ dir: join(root, name), child: null, url: null }));
  for (const slot of slots) {
    // `--standby` starts a daemon that serves as soon as the lease is free: the first one does;
    // `--share` daemons each take a share as they join.
    launch(t, slot, store, mode);
    await listening(slot);
  }
  /** Where the slot's process answers now: a sharing daemon restarts in its process to take partition 0. */
  const refresh = async (slot: Slot) => {
    if (slot.child?.exitCode !== null || slot.url === null) return;
    const info = JSON.parse(await readFile(join(slot.dir, 'daemon.json'), 'utf8').catch(() => '{}')) as {
      pid?: number;
      url?: string;
    };
    if (info.pid === slot.child.pid && info.url) slot.url = info.url;
  };
  const servingSlot = () =>
    eventually(
      'one daemon serves',
      async () => {
        for (const slot of slots) {
          await refresh(slot);
          if (slot.url && slot.child?.exitCode === null && (await healthOf(slot.url).catch(() => '')) === 'ok')
            return slot;
        }
        return null;
      },
      { withinMs: 60_000 },
    );
  const first = await servingSlot();
  // Written by the daemon that first held partition 0: the first one started.
  const key = (await readFile(join(slots[0]!.dir, 'bootstrap.key'), 'utf8')).trim();
  /** Each live daemon's URL and partitions, as a serving one lists them. */
  const holders = async () => {
    const via = await servingSlot();
    const res = await fetch(`${via.url!}/admin/cluster`, { headers: { 'x-api-key': key } });
    const body = (await res.json()) as { items: { url: string; partitions: unknown[] }[] };
    return body.items;
  };
  /** A daemon holding partitions, drawn at random. */
  const holdingSlot = () =>
    eventually('a daemon holds partitions', async () => {
      for (const slot of slots) await refresh(slot);
      const held = new Set((await holders()).filter((d) => d.partitions.length > 0).map((d) => d.url));
      return pick(slots.filter((s) => s.url !== null && s.child?.exitCode === null && held.has(s.url))) ?? null;
    });
  /** Whether the daemons but `victim` hold every partition. */
  const heldByOthers = (victim: Slot) =>
    eventually(
      'the others hold every partition',
      async () => {
        const others = (await holders()).filter((d) => d.url !== victim.url);
        return others.reduce((n, d) => n + d.partitions.length, 0) === 16;
      },
      { withinMs: 60_000 },
    );

  /** A call to the daemon at `url`; null when it was not answered (the daemon died under it). */
  const callAt = async (url: string, method: string, path: string, body?: object) => {
    try {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
        body: body && JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const answer = (await res.json()) as Record<string, unknown>;
      return { status: res.status, body: answer, pause: retryPause(res, answer) };
    } catch {
      return null;
    }
  };
  for (const source of FLOWS) {
    const published = await callAt(first.url!, 'POST', '/admin/flows', { source, organization: 'default' });
    t.equal(published?.status, 200, 'published');
  }

  // What was acknowledged (answered 200): only that is promised.
  const asks: string[] = [];
  const answered = new Set<string>();
  const waiting: { id: string; key: string }[] = [];
  const sent = new Set<string>();
  /** What each acknowledged event was answered, and by which daemon (for a failed run). */
  const delivered = new Map<string, string>();
  const naps: string[] = [];
  /** How each kind of call was answered (status, or `none` when it was not): what a failed run is read by. */
  const tally = new Map<string, number>();
  const live = () => slots.filter((s) => s.url !== null && s.child?.exitCode === null);
  const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(rand() * items.length)];

  const operate = async (): Promise<void> => {
    const slot = pick(live());
    if (!slot) return;
    const url = slot.url!;
    // Unanswered: the daemon died, or (sharing) restarted on another port to take partition 0.
    const call = async (kind: string, method: string, path: string, body?: object) => {
      for (let attempt = 1; ; attempt++) {
        const r = await callAt(url, method, path, body);
        if (r === null) await refresh(slot);
        if (r === null || r.pause === null || attempt === RETRIES) {
          const k = `${kind} ${r?.status ?? 'none'}`;
          tally.set(k, (tally.get(k) ?? 0) + 1);
          return r;
        }
        await sleep(r.pause);
      }
    };
    const kind = rand();
    if (kind < 0.25) {
      const r = await call('ask', 'POST', '/process/start', { processId: ASK_ID, data: {} });
      if (r?.status === 200) asks.push(r.body.processInstanceId as string);
    } else if (kind < 0.45) {
      const id = pick(asks.filter((a) => !answered.has(a)));
      if (!id) return;
      const r = await call('answer', 'POST', '/process/task', {
        processInstanceId: id,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: 'ok' },
      });
      if (r?.status === 200) answered.add(id);
    } else if (kind < 0.65) {
      const correlation = randomUUID();
      const r = await call('wait', 'POST', '/process/start', { processId: EVENT_ID, data: { key: correlation } });
      if (r?.status === 200) waiting.push({ id: r.body.processInstanceId as string, key: correlation });
    } else if (kind < 0.85) {
      const w = pick(waiting.filter((x) => !sent.has(x.id)));
      if (!w) return;
      const r = await call('event', 'POST', '/process/event', {
        eventType: 'go',
        correlationKey: w.key,
        messageId: w.key,
        ttlSeconds: 600,
      });
      if (r?.status === 200) {
        sent.add(w.id);
        delivered.set(w.id, `${url} at ${new Date().toISOString()}: ${JSON.stringify(r.body)}`);
      }
    } else {
      const r = await call('nap', 'POST', '/process/start', { processId: TIMER_ID, data: {} });
      if (r?.status === 200) naps.push(r.body.processInstanceId as string);
    }
  };

  const takeovers: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Standing by, the serving daemon is killed; sharing, any one holding partitions.
    const victim = mode === '--standby' ? await servingSlot() : await holdingSlot();
    const killAt = 4 + Math.floor(rand() * (OPS_PER_ROUND - 8));
    let done = 0;
    let killedAt = 0;
    const worker = async () => {
      while (done < OPS_PER_ROUND) {
        if (done++ === killAt) {
          killedAt = performance.now();
          victim.child!.kill('SIGKILL');
        }
        await operate();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (victim.child!.exitCode === null && victim.child!.signalCode === null) await once(victim.child!, 'exit');
    if (mode === '--standby') t.not(await servingSlot(), victim, `round ${round + 1}: another daemon took over`);
    else t.ok(await heldByOthers(victim), `round ${round + 1}: the others hold every partition`);
    takeovers.push(Math.round(performance.now() - killedAt));
    // The supervisor starts the killed daemon again: a standby now.
    launch(t, victim, store, mode);
    await listening(victim);
  }
  t.comment(`kill to serving again, ms (2 s lease, load still running): ${takeovers.join(', ')}`);
  t.comment(`calls by status: ${[...tally].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
  t.ok(asks.length > 0 && waiting.length > 0 && naps.length > 0, 'each kind of work was acknowledged');
  t.ok(answered.size > 0 && sent.size > 0, 'answers and events too');

  // Answered, and not 503: sharing, a daemon relaunched last may still be taking its share.
  const read = (id: string) =>
    eventually(`${id} is read`, async () => {
      const r = await callAt((await servingSlot()).url!, 'GET', `/process/instance/${id}`);
      return r !== null && r.status !== 503 && r;
    });
  const states = async (ids: readonly string[]) => Promise.all(ids.map(async (id) => (await read(id)).body));
  const finished = (ids: readonly string[], what: string) =>
    eventually(
      what,
      async () => {
        const all = await states(ids);
        return all.every((i) => i.state === 'COMPLETED') && all;
      },
      { withinMs: 60_000 },
    ).catch(async (err: unknown) => {
      // Which ones, and where they stand: what a failed run is read by (with the daemons' logs).
      for (const id of ids) {
        const r = await callAt((await servingSlot()).url!, 'GET', `/process/instance/${id}`);
        if (r?.body.state !== 'COMPLETED')
          t.comment(`${id}: ${r?.status ?? 'no answer'} ${JSON.stringify(r?.body.nodes)} ${delivered.get(id) ?? ''}`);
      }
      throw err;
    });

  for (const inst of await states([...asks, ...waiting.map((w) => w.id), ...naps]))
    t.ok(inst.processInstanceId, 'every acknowledged start is there');
  await finished([...answered], 'every acknowledged answer completes its execution');
  await finished([...sent], 'every acknowledged event completes its execution');
  await finished(naps, 'every timer fires, on whichever daemon serves');

  // No node ran twice: each node of each execution has one node instance.
  const all = await states([...asks, ...waiting.map((w) => w.id), ...naps]);
  const twice = all.flatMap((inst) => {
    const ids = (inst.nodes as { nodeId: string }[]).map((n) => n.nodeId);
    return ids.filter((id, i) => ids.indexOf(id) !== i).map((id) => `${inst.processInstanceId as string}:${id}`);
  });
  t.same(twice, [], 'no node of any execution ran twice');

  const ticks = await eventually('the schedule runs are listed', async () => {
    const r = await callAt((await servingSlot()).url!, 'GET', `/process/${TICK_ID}/instances?limit=100`);
    return r !== null && r.status !== 503 && r;
  });
  const fired = await states((ticks.body.items as { processInstanceId: string }[]).map((i) => i.processInstanceId));
  const minutes = fired.map((i) => (i.data as { scheduledTime: string }).scheduledTime);
  t.equal(new Set(minutes).size, minutes.length, `no schedule fired twice for one minute (${minutes.length} fired)`);
}
