/** Daemons sharing one PostgreSQL database (`--share`) in end-to-end tests. */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { spawnWfx } from './cli.js';
import { eventually } from './eventually.js';

export interface SharingDaemon {
  readonly dir: string;
  child: ChildProcess;
  url: string;
}

/** Starts `wfx daemon start --share` on `store` in `dir` (a 2 s lease; `extra` flags besides), once it listens. */
export async function launchSharing(
  t: Test,
  dir: string,
  store: string,
  env: Record<string, string> = {},
  extra: readonly string[] = [],
): Promise<SharingDaemon> {
  const args = [
    'daemon',
    'start',
    '--foreground',
    '--port',
    '0',
    '--data-dir',
    dir,
    '--share',
    '--lease',
    '2s',
    ...extra,
  ];
  const child = spawnWfx(t, args, { env: { WFX_STORE: store, ...env } });
  child.stdout.resume();
  child.stderr.resume();
  const url = await eventually(`daemon ${dir} listens`, async () => {
    const info = JSON.parse(await readFile(join(dir, 'daemon.json'), 'utf8')) as { pid: number; url: string };
    return info.pid === child.pid && info.url;
  });
  return { dir, child, url };
}

/** Whether the daemon serves itself (not a standby forwarding, nor between the two). */
export async function serving(d: SharingDaemon): Promise<boolean> {
  const res = await fetch(`${d.url}/health`).catch(() => null);
  return res?.status === 200 && ((await res.json()) as { status: string }).status === 'ok';
}

/** Prints the end of each daemon's log but its access lines (for a test that failed). */
export async function printLogs(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs)
    console.error(
      dir,
      (await readFile(join(dir, 'logs', 'daemon.log'), 'utf8').catch(() => 'none'))
        .split('\n')
        .filter((l) => !l.includes('"msg":"request"'))
        .join('\n')
        .slice(-8000),
    );
}

/** The partitions each daemon holds, by its URL, as `via` lists them (GET /admin/cluster). */
export async function holdings(via: SharingDaemon, key: string): Promise<Map<string, number[]>> {
  const res = await fetch(`${via.url}/admin/cluster`, { headers: { 'x-api-key': key } });
  const body = (await res.json()) as { items: { url: string; partitions: { partition: number }[] }[] };
  return new Map(body.items.map((d) => [d.url, d.partitions.map((p) => p.partition)]));
}

/** Resolves once `a` (partition 0 with it) and `b` hold half of the partitions each, and b serves. */
export async function bothShare(a: SharingDaemon, b: SharingDaemon, key: string): Promise<void> {
  await eventually(
    'a and b share the partitions',
    async () => {
      const held = await holdings(a, key);
      return (held.get(a.url)?.length ?? 0) >= 8 && (held.get(b.url)?.length ?? 0) >= 7;
    },
    { withinMs: 20_000 },
  );
  await eventually('b serves', () => serving(b));
}

/** A daemon's answer: status, headers, JSON body. */
export interface DaemonReply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/**
 * A call to `d` with `key`, sent again while it is answered 503 PARTITION_MOVING (as the wfx
 * client does, src/client/http.ts): right after a move, its new holder may still be loading.
 */
export function callDaemon(
  d: SharingDaemon,
  key: string,
  method: string,
  path: string,
  body?: object,
): Promise<DaemonReply> {
  return eventually(`${method} ${path} is answered`, async () => {
    const res = await fetch(`${d.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const reply = { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
    return !(reply.status === 503 && reply.body.error === 'PARTITION_MOVING') && reply;
  });
}

/** A flow that waits at an input node (`ask`) for a task answer. */
export const askFlow = (processId: string): string => `processId: ${processId}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A flow that waits (`wait`) for message `go` correlated by its `key` variable. */
export const waitForGoFlow = (processId: string): string => `processId: ${processId}
name: Wait for go
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: go, correlationKey: "{key}", next: done }
  done: { type: endEvent }
`;
