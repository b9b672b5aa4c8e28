/**
 * Fault-load benchmark (part of `npm run bench`; alone: `npm run bench:fault`): ordinary
 * traffic's `/health` and start latencies while one organization attacks the daemon, beside the
 * same traffic without an attack. A real daemon process with its default limits; the ordinary
 * traffic comes from a load process of its own (bench/load-worker.ts, autocannon), the attacks
 * from this one. Each attack is what issue #53 found exhausting a daemon: a runaway fan-out (a
 * parallel loop over a script's items, a flow calling itself twice over), a flood of idle
 * connections, webhook deliveries with a bad signature, big publishes, endless scripts.
 */
import { execFile, fork } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { LoadOutcome, LoadSpec } from './load-worker.js';
import { machineLine, writeSection } from './report.js';

const run = promisify(execFile);
const WFX = fileURLToPath(new URL('../../bin/wfx.js', import.meta.url));
const LOAD_WORKER = fileURLToPath(new URL('./load-worker.js', import.meta.url));
/** Seconds each measurement runs (BENCH_SECONDS overrides). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);

const PLAIN = '53bec000-0000-4000-8000-000000000001';
const RUNAWAY = '53bec000-0000-4000-8000-000000000002';
const BOMB = '53bec000-0000-4000-8000-000000000003';
const ENDLESS = '53bec000-0000-4000-8000-000000000004';

const FLOWS = {
  plain: `processId: ${PLAIN}
name: Ordinary
nodes:
  start: { type: startEvent, next: set }
  set: { type: setVariable, variables: { ok: true }, next: done }
  done: { type: endEvent }
`,
  runaway: `processId: ${RUNAWAY}
name: Runaway loop
nodes:
  start: { type: startEvent, next: make }
  make: { type: scriptTask, script: "return { items: Array.from({ length: 99000 }, (_, i) => i) }", next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    concurrency: 1000
    maxIterations: 100000
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`,
  bomb: `processId: ${BOMB}
name: Calls itself twice
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [left, right] }
  left: { type: callProcess, processId: ${BOMB}, next: end1 }
  right: { type: callProcess, processId: ${BOMB}, next: end2 }
  end1: { type: endEvent }
  end2: { type: endEvent }
`,
  endless: `processId: ${ENDLESS}
name: Endless script
nodes:
  start: { type: startEvent, next: run }
  run: { type: scriptTask, script: "while (true) {}", timeout: 5m, next: done }
  done: { type: endEvent }
`,
};

/** A setVariable with `keys` keys: the big publish the issue timed. */
function bigFlow(keys: number): string {
  const vars = Array.from({ length: keys }, (_, i) => `      k${i}: ${i}`).join('\n');
  return `processId: 53bec000-0000-4000-8000-000000000005
name: Big publish
nodes:
  start: { type: startEvent, next: set }
  set:
    type: setVariable
    variables:
${vars}
    next: done
  done: { type: endEvent }
`;
}

/** The daemon under attack: its URL, its admin key, the attacker's and the ordinary organization's keys. */
interface Target {
  readonly url: string;
  readonly admin: string;
  readonly attacker: string;
  readonly ordinary: string;
}

/** An attack under way; `stop` ends it and resolves once its traffic has stopped. */
interface Attack {
  readonly stop: () => Promise<void>;
}

async function call(t: Target, key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
}

/** Repeats `fn` on `lanes` lanes until stopped (failures are the attack's, not the bench's). */
function repeat(lanes: number, fn: () => Promise<unknown>): Attack {
  let stopped = false;
  const loops = Array.from({ length: lanes }, async () => {
    while (!stopped) await fn().catch(() => new Promise((r) => setTimeout(r, 10)));
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

const ATTACKS: Record<string, (t: Target) => Promise<Attack>> = {
  'runaway fan-out': async (t) => {
    await call(t, t.attacker, 'POST', '/process/exec', { processId: BOMB });
    return repeat(2, async () => {
      await call(t, t.attacker, 'POST', '/process/exec', { processId: RUNAWAY });
      await call(t, t.attacker, 'POST', '/process/exec', { processId: BOMB });
    });
  },
  'connection flood': async (t) => {
    const { hostname, port } = new URL(t.url);
    const sockets: Socket[] = [];
    let stopped = false;
    // Idle sockets that send nothing, opened as fast as the daemon accepts them, up to 20,000.
    const opening = (async () => {
      for (let i = 0; i < 20_000 && !stopped; i++) {
        const ok = await new Promise<boolean>((resolve) => {
          const s = connect(Number(port), hostname, () => resolve(true));
          s.on('error', () => resolve(false));
          sockets.push(s);
        });
        if (!ok) await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await opening;
        for (const s of sockets) s.destroy();
      },
    };
  },
  'bad-signature flood': async (t) => {
    const made = (await (
      await call(t, t.attacker, 'POST', '/admin/webhooks', {
        name: 'flood',
        provider: 'GITHUB',
        secret: 'the-right-secret',
      })
    ).json()) as { endpoints: Array<{ token: string }> };
    const token = made.endpoints[0]!.token;
    const body = Buffer.alloc(500 * 1024, 'a');
    const signature = `sha256=${createHmac('sha256', 'the-wrong-secret').update(body).digest('hex')}`;
    return repeat(16, () =>
      fetch(`${t.url}/webhook/receive/${token}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': signature,
          'x-github-event': 'push',
          'x-github-delivery': crypto.randomUUID(),
        },
        body,
        signal: AbortSignal.timeout(60_000),
      }).then((r) => r.arrayBuffer()),
    );
  },
  'big publish': async (t) => {
    const source = bigFlow(40_000);
    return repeat(2, () => call(t, t.attacker, 'POST', '/admin/flows', { source }).then((r) => r.arrayBuffer()));
  },
  'endless scripts': async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = (await (await call(t, t.attacker, 'POST', '/process/exec', { processId: ENDLESS })).json()) as {
        processInstanceId: string;
      };
      ids.push(r.processInstanceId);
    }
    return {
      stop: async () => {
        for (const id of ids) await call(t, t.attacker, 'POST', `/process/instance/${id}/cancel`);
      },
    };
  },
};

/** One load process measuring `spec` for SECONDS after a second of warm-up. */
async function measure(spec: {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly connections: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}): Promise<number[]> {
  const worker = fork(LOAD_WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const outcome = new Promise<LoadOutcome>((resolve, reject) => {
      worker.once('message', (m: LoadOutcome) => resolve(m));
      worker.once('exit', (code) => reject(new Error(`the load worker exited with ${code}`)));
    });
    const load: LoadSpec = { ...spec, seconds: SECONDS, warmupSeconds: 1 };
    worker.send(load);
    const { measured } = await outcome;
    return measured.latencies;
  } finally {
    worker.kill();
  }
}

/** p-th percentile of `values` (nearest rank). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One row: ordinary traffic's /health and start latencies, both loads at once. */
export interface FaultRow {
  readonly attack: string;
  readonly healthP50: number;
  readonly healthP99: number;
  readonly startP50: number;
  readonly startP99: number;
  /** Requests of the ordinary loads per second, both together. */
  readonly perSecond: number;
  /** Whether the daemon still answered /health once the attack stopped. */
  readonly alive: boolean;
}

async function ordinary(t: Target): Promise<Omit<FaultRow, 'attack' | 'alive'>> {
  const headers = { 'x-api-key': t.ordinary, 'content-type': 'application/json' };
  const [health, start] = await Promise.all([
    measure({ url: `${t.url}/health`, method: 'GET', connections: 2, headers: {}, body: '' }),
    measure({
      url: `${t.url}/process/exec`,
      method: 'POST',
      connections: 2,
      headers,
      body: JSON.stringify({ processId: PLAIN }),
    }),
  ]);
  return {
    healthP50: percentile(health, 50),
    healthP99: percentile(health, 99),
    startP50: percentile(start, 50),
    startP99: percentile(start, 99),
    perSecond: (health.length + start.length) / SECONDS,
  };
}

/** Runs every attack in turn against one daemon, each beside a measurement of ordinary traffic. */
export async function runFaultBench(): Promise<FaultRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-fault-bench-'));
  const dataDir = join(dir, 'data');
  const { stdout } = await run(process.execPath, [
    WFX,
    'daemon',
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--json',
  ]);
  const { url } = JSON.parse(stdout) as { url: string };
  try {
    const admin = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const keyOf = async (organization: string, role: string) => {
      const res = await fetch(`${url}/admin/api-keys`, {
        method: 'POST',
        headers: { 'x-api-key': admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: organization, role, organization }),
      });
      return ((await res.json()) as { apiKey: string }).apiKey;
    };
    const t: Target = {
      url,
      admin,
      attacker: await keyOf('attacker', 'admin'),
      ordinary: await keyOf('ordinary', 'developer'),
    };
    await call(t, t.ordinary, 'POST', '/admin/flows', { source: FLOWS.plain });
    for (const source of [FLOWS.runaway, FLOWS.bomb, FLOWS.endless])
      await call(t, t.attacker, 'POST', '/admin/flows', { source });
    const rows: FaultRow[] = [{ attack: 'none', ...(await ordinary(t)), alive: true }];
    for (const [name, start] of Object.entries(ATTACKS)) {
      const attack = await start(t);
      const figures = await ordinary(t);
      await attack.stop();
      const alive = await fetch(`${url}/health`, { signal: AbortSignal.timeout(30_000) }).then(
        (r) => r.ok,
        () => false,
      );
      rows.push({ attack: name, ...figures, alive });
      if (!alive) break;
      rows.push({ attack: 'none', ...(await ordinary(t)), alive: true });
    }
    return rows;
  } finally {
    await run(process.execPath, [WFX, 'daemon', 'stop', '--data-dir', dataDir]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (n: number) => (Number.isNaN(n) ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1));

/** The figures as the markdown table docs/performance.md shows. */
export function formatFaultBench(rows: readonly FaultRow[]): string {
  const lines = [
    `Ordinary traffic (2 connections on \`GET /health\`, 2 starting a 3-node flow, another organization's) for ${SECONDS} s while one organization attacks, beside the same traffic without an attack just before; latencies in ms.`,
    '',
    '| attack | /health p50 | /health p99 | start p50 | start p99 | ordinary req/s | daemon answered after |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.attack} | ${ms(r.healthP50)} | ${ms(r.healthP99)} | ${ms(r.startP50)} | ${ms(r.startP99)} | ${Math.round(r.perSecond)} | ${r.alive ? 'yes' : '**no**'} |`,
    ),
  ];
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await runFaultBench();
  const table = formatFaultBench(rows);
  console.log(table);
  await writeSection('fault', `${machineLine()}\n\n${table}`);
}
