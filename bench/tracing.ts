/**
 * `npm run bench:tracing` (part of `npm run bench`): the cost of OpenTelemetry tracing on a real
 * daemon. Two daemon processes, one with tracing off (the default) and one exporting to an
 * OTLP/HTTP sink in this process, take the same load of `POST /process/start` of a five-node
 * flow in alternating rounds (a shared machine's drift falls on both); figures are the median
 * round of each, with the spans the sink received. A third daemon samples a tenth of its traces
 * (`--trace-sample-ratio 0.1`). BENCH_BASELINE=<checkout>/bin/wfx.js adds a
 * third daemon, another build (the commit before tracing, say) with tracing off, to the rounds:
 * what tracing's checks cost when it is off.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startBenchDaemon, UNPACED, type BenchDaemon } from './daemon.js';
import { FIVE_NODE_FLOW } from './engine.js';
import { machineLine, writeSection } from './report.js';

/** Seconds of each round (BENCH_SECONDS overrides). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Rounds per daemon (BENCH_ROUNDS overrides). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 32;
/** Another build's `bin/wfx.js`, run with tracing off beside this one's two daemons. */
const BASELINE = process.env.BENCH_BASELINE;
const PROCESS_ID = /processId: (\S+)/.exec(FIVE_NODE_FLOW)![1]!;

/** The figures of one configuration. */
export interface TracingFigures {
  readonly label: string;
  /** Starts per second, each round's. */
  readonly rounds: readonly number[];
  readonly median: number;
  readonly failed: number;
}

/** What the benchmark measured. */
export interface TracingBench {
  readonly off: TracingFigures;
  readonly on: TracingFigures;
  /** Tracing on, a tenth of new traces sampled (`--trace-sample-ratio 0.1`). */
  readonly sampled: TracingFigures;
  /** The baseline build's daemon (BENCH_BASELINE), when one was given. */
  readonly baseline?: TracingFigures;
  /** Spans the sink received from the tracing daemon, and the starts it answered. */
  readonly spans: number;
  readonly startsOn: number;
}

/** An OTLP/HTTP sink counting the spans it receives (answers 200 at once; the bodies are wfx's own, so counting is enough). */
async function sink(): Promise<{ url: string; spans: () => number; close: () => void }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Counted without parsing (a span is the one object with a "spanId"): the sink shares the machine.
      const body = Buffer.concat(chunks).toString('latin1');
      for (let at = body.indexOf('"spanId"'); at !== -1; at = body.indexOf('"spanId"', at + 8)) spans++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => server.close(),
  };
}

/** One round of starts against `daemon`: starts per second, and the requests that failed. */
async function round(url: string, key: string): Promise<{ perSecond: number; total: number; failed: number }> {
  const r = await autocannon({
    url: `${url}/process/start`,
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ processId: PROCESS_ID, data: { orderId: 'o-1', amount: 150 } }),
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  return { perSecond: r.requests.total / SECONDS, total: r.requests.total, failed: r.errors + r.timeouts + r.non2xx };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs the benchmark (see the file's comment). */
export async function runTracingBench(): Promise<TracingBench> {
  const root = await mkdtemp(join(tmpdir(), 'wfx-bench-tracing-'));
  const otlp = await sink();
  const otlpSampled = await sink();
  const daemons: BenchDaemon[] = [];
  try {
    const flows = join(root, 'flows');
    await mkdir(flows);
    await writeFile(join(flows, 'five.yaml'), FIVE_NODE_FLOW);
    const start = async (name: string, args: string[], wfx?: string) => {
      const dir = join(root, name);
      // The organization's pace of starts left unbounded: what is measured is tracing's cost.
      const d = await startBenchDaemon(dir, ['--flows', flows, ...(wfx === undefined ? UNPACED : []), ...args], wfx);
      daemons.push(d);
      return { ...d, key: (await readFile(join(dir, 'bootstrap.key'), 'utf8')).trim() };
    };
    const off = await start('off', []);
    const on = await start('on', ['--otlp-endpoint', otlp.url]);
    const tenth = await start('sampled', ['--otlp-endpoint', otlpSampled.url, '--trace-sample-ratio', '0.1']);
    const base = BASELINE ? await start('baseline', [], BASELINE) : undefined;
    // A short warm-up of each: the first requests compile the routes' validators.
    await round(off.url, off.key);
    await round(on.url, on.key);
    await round(tenth.url, tenth.key);
    if (base) await round(base.url, base.key);
    const counted = otlp.spans();
    const figures = { off: [] as number[], on: [] as number[], failedOff: 0, failedOn: 0, startsOn: 0 };
    const sampled = { rounds: [] as number[], failed: 0 };
    const baseline = { rounds: [] as number[], failed: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      if (base) {
        const c = await round(base.url, base.key);
        baseline.rounds.push(c.perSecond);
        baseline.failed += c.failed;
      }
      const a = await round(off.url, off.key);
      figures.off.push(a.perSecond);
      figures.failedOff += a.failed;
      const b = await round(on.url, on.key);
      figures.on.push(b.perSecond);
      figures.failedOn += b.failed;
      figures.startsOn += b.total;
      const c = await round(tenth.url, tenth.key);
      sampled.rounds.push(c.perSecond);
      sampled.failed += c.failed;
    }
    // The tracing daemon's graceful stop sends the spans still queued.
    await on.stop();
    return {
      off: { label: 'tracing off', rounds: figures.off, median: median(figures.off), failed: figures.failedOff },
      on: { label: 'tracing on', rounds: figures.on, median: median(figures.on), failed: figures.failedOn },
      sampled: {
        label: 'tracing on, --trace-sample-ratio 0.1',
        rounds: sampled.rounds,
        median: median(sampled.rounds),
        failed: sampled.failed,
      },
      spans: otlp.spans() - counted,
      startsOn: figures.startsOn,
      ...(base && {
        baseline: {
          label: 'tracing off, baseline build',
          rounds: baseline.rounds,
          median: median(baseline.rounds),
          failed: baseline.failed,
        },
      }),
    };
  } finally {
    for (const d of daemons) await d.stop();
    otlp.close();
    otlpSampled.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** The benchmark's figures as a Markdown table. */
export function formatTracingBench(b: TracingBench): string {
  const row = (f: TracingFigures) =>
    `| ${f.label} | ${Math.round(f.median)} | ${f.rounds.map((r) => Math.round(r)).join(', ')} | ${f.failed} |`;
  const ratio = b.on.median / b.off.median;
  return [
    `${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s each.`,
    '',
    '| daemon | starts/s (median round) | each round | failed |',
    '| --- | ---: | --- | ---: |',
    ...(b.baseline ? [row(b.baseline)] : []),
    row(b.off),
    row(b.on),
    row(b.sampled),
    '',
    ...(b.baseline
      ? [`Tracing off runs at ${((b.off.median / b.baseline.median) * 100).toFixed(0)}% of the baseline build.`, '']
      : []),
    `Tracing on runs at ${(ratio * 100).toFixed(0)}% of tracing off; its sink received ${b.spans} spans for ` +
      `${b.startsOn} starts (${(b.spans / Math.max(1, b.startsOn)).toFixed(1)} a start: five nodes, the execution, the request). ` +
      `A tenth of traces sampled runs at ${((b.sampled.median / b.off.median) * 100).toFixed(0)}% of tracing off.`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const figures = formatTracingBench(await runTracingBench());
  console.log(`${machineLine()}\n\n${figures}`);
  await writeSection('tracing', `${machineLine()}\n\n${figures}`);
}
