/**
 * The attacks of bench/faults.ts, in a process of their own so that their work is not the
 * measuring process's: what issue #53 found exhausting a daemon, each from an organization of
 * its own. Protocol (IPC): the parent sends one Attack; this process answers `{ ready: true }`
 * once the attack is in full swing (and `{ error }` if it cannot start), keeps it up until the
 * parent disconnects, undoes what would outlast it (cancels its endless scripts), and exits.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { BOMB, bigFlow, ENDLESS, FLOWS, FORK, forkFlow, RUNAWAY } from './attack-flows.js';

/**
 * Readers replaying a long log again and again; connections kept open from address `from`, each
 * sending `send` (nothing, or part of a request) and no more, reopened as the daemon closes
 * them; a runaway fan-out (a loop starting copies of a script's 99,000 items, a flow calling
 * itself twice over); issue #81's fork, started again as each tree ends; webhook deliveries of
 * 500 KB with a bad signature; big publishes; endless scripts. `key`: an admin key of the
 * attacking organization.
 */
export type Attack =
  | { readonly kind: 'logs'; readonly url: string; readonly key: string; readonly id: string; readonly readers: number }
  | {
      readonly kind: 'flood';
      readonly url: string;
      readonly sockets: number;
      readonly from: string;
      readonly send: string;
    }
  | {
      readonly kind: 'runaway' | 'fork' | 'signatures' | 'publish' | 'scripts';
      readonly url: string;
      readonly key: string;
    };

let stopping = false;
/** What to undo once the attack stops (before this process exits). */
const undo: Array<() => Promise<unknown>> = [];
process.once('disconnect', () => {
  stopping = true;
  void Promise.allSettled(undo.map((u) => u())).then(() => process.exit(0));
});

/** Reads the log of `attack.id` to its end, again and again; resolves after its first bytes. */
function reader(attack: Extract<Attack, { kind: 'logs' }>): Promise<void> {
  return new Promise((ready, failed) => {
    let first = true;
    void (async () => {
      while (!stopping) {
        const res = await fetch(`${attack.url}/process/instance/${attack.id}/logs`, {
          headers: { 'x-api-key': attack.key },
        });
        if (res.status !== 200) return failed(new Error(`the log answered ${res.status}`));
        for await (const _ of res.body!) {
          if (first) ready();
          first = false;
          if (stopping) return;
        }
      }
    })().catch(failed);
  });
}

/**
 * Keeps `attack.sockets` connections open from `attack.from`, each sending `attack.send` once
 * connected: one the daemon closes after a while (its headers timeout) is opened again at once,
 * one closed at once (reset as accepted, or closed to make room) after a pause. Resolves once
 * that many have connected.
 */
function flood(attack: Extract<Attack, { kind: 'flood' }>): Promise<void> {
  const port = Number(new URL(attack.url).port);
  return new Promise((ready) => {
    let connects = 0;
    const open = (): void => {
      if (stopping) return;
      const socket: Socket = connect({ port, host: '127.0.0.1', localAddress: attack.from });
      let since = 0;
      socket.on('connect', () => {
        since = Date.now();
        if (attack.send !== '') socket.write(attack.send);
        if (++connects === attack.sockets) ready();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => setTimeout(open, since > 0 && Date.now() - since > 100 ? 0 : 250));
    };
    for (let i = 0; i < attack.sockets; i++) open();
  });
}

type Call = (method: string, path: string, body?: unknown) => Promise<Response>;

function caller(url: string, key: string): Call {
  return (method, path, body) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
}

/** Runs `fn` again and again on `lanes` lanes until the attack stops; resolves once each ran once. */
function lanes(n: number, fn: () => Promise<unknown>): Promise<void> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      await fn().catch(() => undefined);
      void (async () => {
        while (!stopping) await fn().catch(() => new Promise((resolve) => setTimeout(resolve, 10)));
      })();
    }),
  ).then(() => undefined);
}

async function published(call: Call, source: string): Promise<void> {
  const res = await call('POST', '/admin/flows', { source });
  if (!res.ok) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
}

/** Starts each attack that needs no more than its organization's admin key. */
async function organizationAttack(attack: Extract<Attack, { key: string; kind: string }>): Promise<void> {
  const call = caller(attack.url, attack.key);
  const drain = (res: Response) => res.arrayBuffer();
  switch (attack.kind) {
    case 'runaway':
      await published(call, FLOWS.runaway);
      await published(call, FLOWS.bomb);
      return lanes(2, async () => {
        await call('POST', '/process/exec', { processId: RUNAWAY }).then(drain);
        await call('POST', '/process/exec', { processId: BOMB }).then(drain);
      });
    case 'fork':
      await published(call, forkFlow());
      // A new fork as soon as nothing of the last one runs: the tree budget is what ends each.
      return lanes(1, async () => {
        const root = (
          (await (await call('POST', '/process/exec', { processId: FORK })).json()) as {
            processInstanceId: string;
          }
        ).processInstanceId;
        for (let i = 0; i < 600 && !stopping; i++) {
          const page = (await (
            await call('GET', `/process/instances?rootId=${root}&state=RUNNING&limit=1`)
          ).json()) as {
            items: unknown[];
          };
          if (page.items.length === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
    case 'signatures': {
      const res = await call('POST', '/admin/webhooks', {
        name: `flood-${randomUUID().slice(0, 8)}`,
        provider: 'GITHUB',
        secret: 'the-right-secret',
      });
      const token = ((await res.json()) as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
      const body = Buffer.alloc(500 * 1024, 'a');
      const signature = `sha256=${createHmac('sha256', 'the-wrong-secret').update(body).digest('hex')}`;
      return lanes(16, () =>
        fetch(`${attack.url}/webhook/receive/${token}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-hub-signature-256': signature,
            'x-github-event': 'push',
            'x-github-delivery': randomUUID(),
          },
          body,
          signal: AbortSignal.timeout(60_000),
        }).then(drain),
      );
    }
    case 'publish': {
      const sources = [bigFlow(40_000), bigFlow(10_000)];
      let i = 0;
      return lanes(2, () => call('POST', '/admin/flows', { source: sources[i++ % 2] }).then(drain));
    }
    case 'scripts': {
      await published(call, FLOWS.endless);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await call('POST', '/process/exec', { processId: ENDLESS });
        ids.push(((await res.json()) as { processInstanceId: string }).processInstanceId);
      }
      undo.push(() => Promise.all(ids.map((id) => call('POST', `/process/instance/${id}/cancel`).then(drain))));
      return;
    }
  }
}

process.once('message', (attack: Attack) => {
  const started =
    attack.kind === 'logs'
      ? Promise.all(Array.from({ length: attack.readers }, () => reader(attack)))
      : attack.kind === 'flood'
        ? flood(attack)
        : organizationAttack(attack);
  started.then(
    () => process.send!({ ready: true }),
    (err: unknown) => process.send!({ error: String(err) }),
  );
});
