/**
 * The attacks of bench/faults.ts, in a process of their own so that their work is not the
 * measuring process's. Protocol (IPC): the parent sends one Attack; this process answers
 * `{ ready: true }` once the attack is in full swing (and `{ error }` if it cannot start), keeps
 * it up until the parent disconnects, then answers nothing more and exits.
 */
import { connect, type Socket } from 'node:net';

/** Readers replaying a long log again and again; or idle connections kept open, reopened as the daemon closes them. */
export type Attack =
  | { readonly kind: 'logs'; readonly url: string; readonly key: string; readonly id: string; readonly readers: number }
  | { readonly kind: 'flood'; readonly url: string; readonly sockets: number };

let stopping = false;
process.once('disconnect', () => {
  stopping = true;
  setImmediate(() => process.exit(0));
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
 * Keeps `n` idle connections open: one the daemon closes after its headers timeout is opened
 * again at once, one reset as accepted (over the cap) after a pause. Resolves once `n` have
 * connected.
 */
function flood(url: string, n: number): Promise<void> {
  const port = Number(new URL(url).port);
  return new Promise((ready) => {
    let connects = 0;
    const open = (): void => {
      if (stopping) return;
      const socket: Socket = connect(port, '127.0.0.1');
      let since = 0;
      socket.on('connect', () => {
        since = Date.now();
        if (++connects === n) ready();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => setTimeout(open, since > 0 && Date.now() - since > 100 ? 0 : 250));
    };
    for (let i = 0; i < n; i++) open();
  });
}

process.once('message', (attack: Attack) => {
  const started =
    attack.kind === 'logs'
      ? Promise.all(Array.from({ length: attack.readers }, () => reader(attack)))
      : flood(attack.url, attack.sockets);
  started.then(
    () => process.send!({ ready: true }),
    (err: unknown) => process.send!({ error: String(err) }),
  );
});
