/**
 * Ordinary traffic while the daemon is attacked (part of `npm run bench`; alone: `npm run
 * bench:faults`): `/health` and `POST /process/start` latencies of one client each, one request
 * at a time, on a real daemon with its default limits, without an attack and then during each
 * of issue #53's: readers replaying the log of the longest execution there is (100,000 node
 * instances), floods of connections over the daemon's cap from another address (idle, then
 * sending half a request; issue #81), webhook deliveries with a bad signature, big publishes,
 * endless scripts, issue #81's fork started again and again, and a runaway fan-out (last: what
 * it started goes on a while after it stops). The attacks run in their own process
 * (bench/fault-attacker.ts), from another organization than the traffic's; the traffic from
 * this one.
 */
import { startBenchDaemon } from './daemon.js';
import { fork } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WfxClient } from '../src/client/client.js';
import { FIVE_NODE_FLOW } from './engine.js';
import type { Attack } from './fault-attacker.js';
import { percentile } from './http.js';
import { machineLine, writeSection } from './report.js';

const ATTACKER = fileURLToPath(new URL('./fault-attacker.js', import.meta.url));
/** Seconds of traffic measured in each phase (BENCH_SECONDS overrides). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Log readers at once: the reproduction. */
const READERS = 8;
/** The daemon's cap in the flood phases, and the connections each flood keeps open. */
const MAX_CONNECTIONS = 500;
const FLOOD = 2_000;
/** The floods' source address: a loopback address of their own, not the traffic's (127.0.0.1). */
const FLOOD_FROM = '127.0.0.2';
/** What each connection of the second flood sends: headers that never end. */
const HALF_REQUEST =
  'POST /process/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n';

const SPIN = `processId: 0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5
name: Spin
nodes:
  start: { type: startEvent, next: again }
  again: { type: ifElse, condition: "\${true}", then: again, else: done }
  done: { type: endEvent }
`;

/** Latencies of one kind of request in one phase. */
interface Latencies {
  readonly count: number;
  readonly failed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface FaultsBenchResult {
  readonly phases: ReadonlyArray<{
    readonly what: string;
    readonly health: Latencies;
    readonly start: Latencies;
    /** GET /health, each on a connection of its own (a new client). */
    readonly fresh: Latencies;
  }>;
  /** Entries and bytes of the log the readers replay. */
  readonly log: { readonly entries: number; readonly bytes: number };
}

/**
 * Sends requests made by `send` one at a time until `until` resolves; the latencies of those
 * sent once `measuring()` (before: a warm-up, which keeps the client's connection open).
 */
async function traffic(
  send: () => Promise<{ ok: boolean }>,
  measuring: () => boolean,
  until: Promise<void>,
): Promise<Latencies> {
  let done = false;
  void until.then(() => (done = true));
  const ms: number[] = [];
  let failed = 0;
  while (!done) {
    const counted = measuring();
    const t0 = performance.now();
    const ok = await send().then(
      (res) => res.ok,
      () => false,
    );
    if (ok && counted) ms.push(performance.now() - t0);
    else if (!ok) {
      if (counted) failed++;
      // A refusal comes at once: paced, the client does not become a flood of its own.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const sorted = Float64Array.from(ms).sort();
  return {
    count: sorted.length,
    failed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** GET `url` on a connection of its own, closed after the answer. */
function freshGet(url: string): Promise<{ ok: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode === 200 }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * /health and start traffic during `attack` (none: the baseline): the clients start first and
 * keep their connections through the attack's start; SECONDS are measured once it is on.
 */
async function phase(url: string, key: string, attack: Attack | null) {
  const attacker = attack ? fork(ATTACKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : null;
  let on = attack === null;
  let end!: () => void;
  const over = new Promise<void>((resolve) => (end = resolve));
  const body = JSON.stringify({ processId: '7f3e2d1c-0b9a-4876-9543-210fedcba987', data: { orderId: 1, amount: 5 } });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const measuring = () => on;
  const loads = Promise.all([
    traffic(() => fetch(`${url}/health`).then(drained), measuring, over),
    traffic(() => fetch(`${url}/process/start`, { method: 'POST', headers, body }).then(drained), measuring, over),
    traffic(() => freshGet(`${url}/health`), measuring, over),
  ]);
  try {
    if (attacker && attack) {
      attacker.send(attack);
      const [answer] = (await once(attacker, 'message')) as [{ ready?: true; error?: string }];
      if (!answer.ready) throw new Error(`the attack did not start: ${answer.error}`);
      on = true;
    }
    setTimeout(end, SECONDS * 1000);
    const [health, start, fresh] = await loads;
    return { health, start, fresh };
  } finally {
    end();
    attacker?.disconnect();
    if (attacker && attacker.exitCode === null) await once(attacker, 'exit');
  }
}

/** The response, its body read (so that its connection is free again). */
async function drained(res: Response): Promise<Response> {
  await res.arrayBuffer();
  return res;
}

export async function runFaultsBench(): Promise<FaultsBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-faults-'));
  const dataDir = join(dir, 'data');
  const daemon = await startBenchDaemon(dataDir, ['--max-connections', String(MAX_CONNECTIONS)]);
  try {
    const { url } = daemon;
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const client = new WfxClient({ url, apiKey: key, credentialSource: 'bench' });
    await client.flows.publish({ source: FIVE_NODE_FLOW });
    await client.flows.publish({ source: SPIN });
    const { processInstanceId: id } = await client.process.startAny({
      processId: '0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5',
    });
    // It fails once it has made 100,000 node instances; then its log is read from history.
    for (let i = 0; i < 600 && (await client.instances.get(id)).stateCd === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const log = await (await fetch(`${url}/process/instance/${id}/logs`, { headers: { 'x-api-key': key } })).text();
    const made = await fetch(`${url}/admin/api-keys`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'attacker', role: 'admin', organization: 'attacker' }),
    });
    const attacker = ((await made.json()) as { apiKey: string }).apiKey;
    const phases = [
      { what: 'no attack', ...(await phase(url, key, null)) },
      {
        what: `${READERS} clients replaying the log of a 100,000-node execution, again and again`,
        ...(await phase(url, key, { kind: 'logs', url, key, id, readers: READERS })),
      },
      {
        what: `${FLOOD} idle connections from ${FLOOD_FROM} kept open against --max-connections ${MAX_CONNECTIONS}`,
        ...(await phase(url, key, { kind: 'flood', url, sockets: FLOOD, from: FLOOD_FROM, send: '' })),
      },
      {
        what: `${FLOOD} connections from ${FLOOD_FROM} that send half a request's headers and stop, against --max-connections ${MAX_CONNECTIONS}`,
        ...(await phase(url, key, { kind: 'flood', url, sockets: FLOOD, from: FLOOD_FROM, send: HALF_REQUEST })),
      },
      {
        what: '16 senders of 500 KB webhook deliveries with a bad signature',
        ...(await phase(url, key, { kind: 'signatures', url, key: attacker })),
      },
      {
        what: 'two publishers of a 40,000-variable flow (refused) and a 10,000-variable one, in turn',
        ...(await phase(url, key, { kind: 'publish', url, key: attacker })),
      },
      {
        what: 'eight endless scripts (5m timeout) of another organization',
        ...(await phase(url, key, { kind: 'scripts', url, key: attacker })),
      },
      {
        what: "issue #81's fork (a flow calling itself through a parallel gateway), started again as soon as its last tree ended",
        ...(await phase(url, key, { kind: 'fork', url, key: attacker })),
      },
      {
        what: "a runaway fan-out: a parallel loop over a script's 99,000 items and a flow calling itself twice over, started on two connections again and again",
        ...(await phase(url, key, { kind: 'runaway', url, key: attacker })),
      },
    ];
    return { phases, log: { entries: (log.match(/^id: /gm) ?? []).length, bytes: Buffer.byteLength(log) } };
  } finally {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (n: number) => (Number.isNaN(n) ? '-' : `${n.toFixed(n < 10 ? 2 : 0)} ms`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const cell = (l: Latencies) =>
  `p50 ${ms(l.p50)}, **p99 ${ms(l.p99)}**, max ${ms(l.max)} (${fmt(l.count)} answered, ${l.failed} failed)`;

export function formatFaultsBench(r: FaultsBenchResult): string {
  return [
    `The log replayed: ${fmt(r.log.entries)} entries, ${(r.log.bytes / 2 ** 20).toFixed(1)} MiB. Each phase: ${SECONDS} s of one client sending \`GET /health\` and one sending \`POST /process/start\` (5-node flow), one request at a time each, on connections opened before the attack; and one sending \`GET /health\` on a new connection each time.`,
    '',
    '| while | GET /health | POST /process/start | GET /health, a new connection each |',
    '|---|---|---|---|',
    ...r.phases.map((p) => `| ${p.what} | ${cell(p.health)} | ${cell(p.start)} | ${cell(p.fresh)} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(machineLine({ commit: true }));
  const text = formatFaultsBench(await runFaultsBench());
  console.log(text);
  await writeSection('faults', `${machineLine()}\n\n${text}`);
  console.log('\nwritten to docs/benchmarks/');
}
