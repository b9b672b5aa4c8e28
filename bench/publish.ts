/**
 * Publishing big flows (part of `npm run bench`): a real daemon process, flows at the limits of
 * FLOW_LIMITS published over HTTP one after another, and /health asked back to back meanwhile
 * from this process. Beside each: the same flow validated in this process's own thread, what a
 * publish held the daemon's event loop for before checks moved to a worker thread
 * (docs/decisions/047-flow-limits.md).
 */
import { startBenchDaemon } from './daemon.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FLOW_LIMITS } from '../src/shared/flow/limits.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { machineLine, writeSection } from './report.js';

const PID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';
/** Publishes of each flow (BENCH_PUBLISHES overrides). */
const PUBLISHES = Number(process.env.BENCH_PUBLISHES ?? 5);

interface Case {
  readonly what: string;
  /** The source of the n-th publish (each differs: every publish writes a version). */
  readonly source: (n: number) => string;
  /** True when the limits refuse it (the issue's reproductions). */
  readonly refused?: boolean;
}

const head = (n: number) => `processId: ${PID}\nname: bench ${n}\nnodes:\n`;

/** The cases: the limits reached each way, and the issue's reproductions (refused). */
const CASES: readonly Case[] = [
  {
    what: `${FLOW_LIMITS.nodes.toLocaleString('en')} nodes (serviceTasks in a chain)`,
    source: (n) => {
      const lines = [head(n), '  start: { type: startEvent, next: t0 }'];
      const last = FLOW_LIMITS.nodes - 3;
      for (let i = 0; i <= last; i++)
        lines.push(
          `  t${i}: { type: serviceTask, method: POST, url: "http://127.0.0.1:9/${i}", next: ${i < last ? `t${i + 1}` : 'end'} }`,
        );
      lines.push('  end: { type: endEvent }');
      return `${lines.join('\n')}\n`;
    },
  },
  {
    what: `${FLOW_LIMITS.nodes.toLocaleString('en')} nodes (aiTasks, each with an answer schema of its own)`,
    source: (n) => {
      const lines = [head(n), '  start: { type: startEvent, next: a0 }'];
      const last = FLOW_LIMITS.nodes - 3;
      for (let i = 0; i <= last; i++)
        lines.push(
          `  a${i}: { type: aiTask, prompt: p, schema: { type: object, required: [f${i}] }, next: ${i < last ? `a${i + 1}` : 'end'} }`,
        );
      lines.push('  end: { type: endEvent }');
      return `${lines.join('\n')}\n`;
    },
  },
  {
    what: `a setVariable of ${FLOW_LIMITS.mapKeys.toLocaleString('en')} variables`,
    source: (n) => {
      const lines = [head(n), '  start: { type: startEvent, next: set }', '  set:', '    type: setVariable'];
      lines.push('    variables:');
      for (let i = 0; i < FLOW_LIMITS.mapKeys; i++) lines.push(`      variable_${i}: "{order.lines.${i}.price}"`);
      lines.push('    next: end', '  end: { type: endEvent }');
      return `${lines.join('\n')}\n`;
    },
  },
  {
    what: `a scriptTask whose script fills the ${FLOW_LIMITS.sourceBytes / 1024} KiB`,
    source: (n) => {
      const start = `${head(n)}  start: { type: startEvent, next: s }\n  s:\n    type: scriptTask\n    script: |\n`;
      const end = '    next: end\n  end: { type: endEvent }\n';
      const line = '      total = total + vars.order.lines.length * 3 + 1;\n';
      const lines = Math.floor((FLOW_LIMITS.sourceBytes - start.length - end.length - 100) / line.length);
      return `${start}      let total = 0;\n${line.repeat(lines)}${end}`;
    },
  },
  {
    what: `subProcess bodies nested ${FLOW_LIMITS.bodyDepth} deep`,
    source: (n) => {
      let nodes: object = { start: { type: 'startEvent', next: 'end' }, end: { type: 'endEvent' } };
      for (let d = 0; d < FLOW_LIMITS.bodyDepth; d++)
        nodes = {
          start: { type: 'startEvent', next: 'sub' },
          sub: { type: 'subProcess', nodes, next: 'end' },
          end: { type: 'endEvent' },
        };
      return JSON.stringify({ processId: PID, name: `bench ${n}`, nodes }, null, 1);
    },
  },
  {
    what: 'the issue: a setVariable of 40,000 variables',
    refused: true,
    source: (n) => {
      const lines = [head(n), '  start: { type: startEvent, next: set }', '  set:', '    type: setVariable'];
      lines.push('    variables:');
      for (let i = 0; i < 40_000; i++) lines.push(`      v${i}: ${i}`);
      lines.push('    next: end', '  end: { type: endEvent }');
      return `${lines.join('\n')}\n`;
    },
  },
  {
    what: 'the issue: subProcess bodies nested 80 deep',
    refused: true,
    source: (n) => {
      let nodes: object = { start: { type: 'startEvent', next: 'end' }, end: { type: 'endEvent' } };
      for (let d = 0; d < 80; d++)
        nodes = {
          start: { type: 'startEvent', next: 'sub' },
          sub: { type: 'subProcess', nodes, next: 'end' },
          end: { type: 'endEvent' },
        };
      return JSON.stringify({ processId: PID, name: `bench ${n}`, nodes });
    },
  },
];

/** One row of the table. */
export interface PublishFigures {
  readonly what: string;
  readonly kib: number;
  readonly status: number;
  readonly publishMedianMs: number;
  readonly publishMaxMs: number;
  readonly health: Latency;
  /** The same validation in this thread: how long the event loop would be held without the worker. */
  readonly inThreadMs: number;
}

interface Latency {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}

/** Runs the publish benchmark against a fresh daemon; resolves to the baseline and one row per case. */
export async function runPublishBench(): Promise<{ baseline: Latency; rows: PublishFigures[] }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'wfx-bench-publish-'));
  const daemon = await startBenchDaemon(dataDir);
  const { url } = daemon;
  try {
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const health = async (): Promise<number> => {
      const t0 = performance.now();
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
      return performance.now() - t0;
    };
    const publish = async (source: string): Promise<{ ms: number; status: number }> => {
      const t0 = performance.now();
      const res = await fetch(`${url}/admin/flows`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ source }),
      });
      await res.arrayBuffer();
      return { ms: performance.now() - t0, status: res.status };
    };
    const baselineSamples: number[] = [];
    for (let i = 0; i < 300; i++) baselineSamples.push(await health());
    // The worker starts with the first check: once here, so that no row pays for it.
    await publish(CASES[3]!.source(0));
    const rows: PublishFigures[] = [];
    let n = 1;
    for (const c of CASES) {
      const samples: number[] = [];
      let publishing = true;
      const sampler = (async () => {
        while (publishing) samples.push(await health());
      })();
      const times: number[] = [];
      let status = 0;
      for (let i = 0; i < PUBLISHES; i++) {
        const r = await publish(c.source(n++));
        times.push(r.ms);
        status = r.status;
      }
      publishing = false;
      await sampler;
      const source = c.source(0);
      let inThreadMs = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        validateFlowSource(source);
        inThreadMs = Math.min(inThreadMs, performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      rows.push({
        what: c.what,
        kib: Buffer.byteLength(source) / 1024,
        status,
        publishMedianMs: times[Math.floor(times.length / 2)]!,
        publishMaxMs: times.at(-1)!,
        health: latency(samples),
        inThreadMs,
      });
      if ((status === 200) === Boolean(c.refused)) throw new Error(`${c.what}: publish answered ${status}`);
    }
    return { baseline: latency(baselineSamples), rows };
  } finally {
    await daemon.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The figures as the markdown of docs/benchmarks/publish.md. */
export function formatPublishBench(r: { baseline: Latency; rows: PublishFigures[] }): string {
  const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  const lines = [
    `/health alone: p50 ${ms(r.baseline.p50)} ms, p99 ${ms(r.baseline.p99)} ms, max ${ms(r.baseline.max)} ms (${r.baseline.count} requests).`,
    '',
    `| flow (${PUBLISHES} publishes each) | source | answer | publish median (max) | /health during: p50 / p99 / max (requests) | validated in the calling thread |`,
    '|---|---|---|---|---|---|',
  ];
  for (const row of r.rows)
    lines.push(
      `| ${row.what} | ${row.kib.toFixed(0)} KiB | ${row.status} | ${ms(row.publishMedianMs)} ms (${ms(row.publishMaxMs)}) | ${ms(row.health.p50)} / ${ms(row.health.p99)} / **${ms(row.health.max)} ms** (${row.health.count}) | ${ms(row.inThreadMs)} ms |`,
    );
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatPublishBench(await runPublishBench());
  console.log(table);
  await writeSection('publish', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
