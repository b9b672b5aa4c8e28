/**
 * Search attributes (`npm run bench:search`, part of `npm run bench`): a real daemon whose store
 * (the JSON store, then PostgreSQL where it is installed) holds BENCH_SEARCH_EXECUTIONS
 * executions (default 1,000,000) of a flow with `search: { orderId, customer }`: the newest
 * BENCH_SEARCH_WAITING (default 100,000) waiting at an input node (in the execution cache or
 * out of memory, as the daemon's cache decides), the rest ended, in history over five
 * day buckets. Asked `GET /process/instances?where=` over HTTP, one request at a time, as the
 * console's Search and `wfx instances list --where` ask it: a running execution by its order id,
 * an ended one three days back, a customer's newest page, an order id nothing has; and beside
 * them the same ended one by its correlation key, a filter with no index of its own.
 */
import { pathToFileURL } from 'node:url';
import { newApiKey } from '../src/daemon/auth/api-keys.js';
import { Engine } from '../src/daemon/engine/engine.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { startBenchDaemon, UNPACED_LIMITS } from './daemon.js';
import { casesTable, onEachStore, timeCases, type ListCase, type Opened } from './executions.js';
import { rss } from './http.js';
import { machineLine, writeSection } from './report.js';

const EXECUTIONS = Number(process.env.BENCH_SEARCH_EXECUTIONS ?? 1_000_000);
const WAITING = Number(process.env.BENCH_SEARCH_WAITING ?? 100_000);
const DAYS = 5;
/** Customers the executions are spread over: each has EXECUTIONS / CUSTOMERS of them. */
const CUSTOMERS = 1_000;
/** Requests of each case after its first. */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 50);
const DAY_MS = 86_400_000;

const FLOW = `processId: 6a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d
name: Orders searched
search: { orderId: "{orderId}", customer: "{customer}" }
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches: [{ condition: "\${wait == true}", next: ask }]
    default: done
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const orderId = (i: number) => `A-${String(i).padStart(7, '0')}`;

/**
 * Fills the store `open` opens through the engine, 200 starts at a time, over DAYS days ending
 * today (the clock moved on before each start): the last WAITING wait, the others end at once.
 */
async function seed(open: () => Promise<Opened>): Promise<{ apiKey: string; seconds: number }> {
  const t0 = performance.now();
  const { store, history } = await open();
  const today = Date.now() - (Date.now() % DAY_MS);
  let clock = today - (DAYS - 1) * DAY_MS;
  const engine = new Engine({ store, history, now: () => new Date(clock), limits: UNPACED_LIMITS });
  await store.commit({ type: 'organization.created', name: 'default', at: new Date(clock).toISOString() });
  const made = newApiKey({ name: 'console', organization: 'default', role: 'viewer', at: new Date(clock) });
  await store.commit({ type: 'apiKey.created', key: made.key });
  const v = validateFlowSource(FLOW);
  if (!v.ok) throw new Error('bench flow does not validate');
  const { processId } = await publishFlow(store, {
    definition: v.flow,
    organization: 'default',
    environment: 'PRODUCTION',
  });
  const perDay = Math.ceil(EXECUTIONS / DAYS);
  const step = Math.floor((DAY_MS - 60_000) / perDay);
  for (let day = 0; day < DAYS; day++) {
    clock = today - (DAYS - 1 - day) * DAY_MS;
    await inCallers(Math.min(perDay, EXECUTIONS - day * perDay), 200, async (j) => {
      const i = day * perDay + j;
      clock += step;
      await engine.start({
        processId,
        organization: 'default',
        data: { orderId: orderId(i), customer: `c${i % CUSTOMERS}`, wait: i >= EXECUTIONS - WAITING },
        correlationKey: `k-${i}`,
      });
    });
  }
  await engine.close();
  await history.close();
  await store.close();
  return { apiKey: made.apiKey, seconds: (performance.now() - t0) / 1000 };
}

interface StoreFigures {
  readonly seedSeconds: number;
  /** The daemon's RSS once the cases ran (MiB). */
  readonly rssMiB: number;
  readonly cases: readonly ListCase[];
}

export interface SearchBench {
  readonly executions: number;
  readonly waiting: number;
  readonly files: StoreFigures;
  /** Null where PostgreSQL is not installed. */
  readonly postgres: StoreFigures | null;
}

/** Seeds a store, starts a daemon on it (`storeArgs`: its store, if not the data dir's) and times each case. */
async function measure(
  dataDir: string,
  open: () => Promise<Opened>,
  storeArgs: readonly string[] = [],
): Promise<StoreFigures> {
  const seeded = await seed(open);
  const daemon = await startBenchDaemon(dataDir, storeArgs);
  try {
    const get = async (path: string): Promise<{ ms: number; items: number }> => {
      const t0 = performance.now();
      const res = await fetch(`${daemon.url}${path}`, { headers: { 'x-api-key': seeded.apiKey } });
      const body = (await res.json()) as { items?: unknown[] };
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(body)}`);
      return { ms: performance.now() - t0, items: body.items?.length ?? 0 };
    };
    const list = '/process/instances?limit=50';
    const where = (pair: string) => `${list}&where=${encodeURIComponent(pair)}`;
    const running = EXECUTIONS - Math.floor(WAITING / 2);
    const ended = Math.floor(EXECUTIONS / 3);
    const cases: Array<[string, string]> = [
      [`where=orderId= (a running one)`, where(`orderId=${orderId(running)}`)],
      [`where=orderId= (an ended one, three days back)`, where(`orderId=${orderId(ended)}`)],
      [
        `where=customer= (its ${(EXECUTIONS / CUSTOMERS).toLocaleString('en')} executions: the newest page)`,
        where('customer=c42'),
      ],
      ['where=orderId= (no execution has it)', where('orderId=none')],
      ['beside them: correlationKey= (the same ended one; no index)', `${list}&correlationKey=k-${ended}`],
    ];
    const out = await timeCases(get, cases, REPEAT);
    return { seedSeconds: seeded.seconds, rssMiB: (await rss(daemon.pid)) / 2 ** 20, cases: out };
  } finally {
    await daemon.stop();
  }
}

/** Times the cases on the JSON store, then on PostgreSQL where it is installed. */
export async function runSearchBench(): Promise<SearchBench> {
  return { executions: EXECUTIONS, waiting: WAITING, ...(await onEachStore('search', measure)) };
}

/** The figures as the markdown of docs/benchmarks/search-attributes.md. */
export function formatSearchBench(r: SearchBench): string {
  const seeded = `${r.files.seedSeconds.toFixed(0)} s${r.postgres ? `, ${r.postgres.seedSeconds.toFixed(0)} s on PostgreSQL` : ''}`;
  const rssText = `${r.files.rssMiB.toFixed(0)} MiB${r.postgres ? `, ${r.postgres.rssMiB.toFixed(0)} MiB on PostgreSQL` : ''}`;
  const lines = [
    `${r.executions.toLocaleString('en')} executions of one flow with two search attributes (orderId, each its own; customer, one of ${CUSTOMERS.toLocaleString('en')}): the newest ${r.waiting.toLocaleString('en')} waiting at an input node, the rest in history over ${DAYS} day buckets; written by the engine (${seeded}); a daemon started on them (RSS after the cases: ${rssText}); GET /process/instances (limit 50) over HTTP with an organization's viewer key, one request at a time: the first request, then p50 / p95 / max of ${REPEAT} more.`,
    '',
    ...casesTable('GET /process/instances?where=', r.files.cases, r.postgres?.cases),
  ];
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatSearchBench(await runSearchBench());
  console.log(table);
  await writeSection('search-attributes', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
