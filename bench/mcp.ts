/**
 * MCP benchmark (`npm run bench:mcp`, and part of `npm run bench`): tool calls a second through
 * a real daemon's /mcp, the official SDK's client in this process, beside `POST
 * /process/start?wait=` of the same 3-node flow with the same callers, in one run. Both answer
 * once the execution has ended. The two loads alternate in slices, so that both meet the same
 * machine. One MCP session carries every caller's calls, as one AI client's concurrent calls do.
 * Figures: calls a second, p50 and p99 latency, and the daemon's main-thread CPU a call.
 */
import { setMaxListeners } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { inCallers } from './callers.js';
import { startBenchDaemon, UNPACED } from './daemon.js';
import { mainThreadCpuMs, percentile } from './http.js';
import { machineLine, writeSection } from './report.js';

const PROCESS_ID = 'b0890000-0000-4000-8000-000000000001';
const FLOW = `processId: ${PROCESS_ID}
name: Greet
description: Greets someone by name.
inputs:
  type: object
  properties: { name: { type: string } }
  required: [name]
nodes:
  start: { type: startEvent, next: greet }
  greet: { type: setVariable, variables: { greeting: "hello {name}" }, next: done }
  done: { type: endEvent }
`;

/** Calls per slice and slices per load (each load runs SLICES slices, alternating with the other). */
const PER_SLICE = Number(process.env.BENCH_MCP_CALLS ?? 500);
const SLICES = 4;

export interface CallFigures {
  readonly calls: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The daemon's main-thread CPU a call, in ms (null where /proc has none). */
  readonly cpuMs: number | null;
}

export interface McpBenchRow {
  readonly callers: number;
  readonly mcp: CallFigures;
  readonly start: CallFigures;
}

/** One load's running totals over its slices. */
class Tally {
  readonly latencies: number[] = [];
  seconds = 0;
  cpuMs: number | null = 0;
  figures(): CallFigures {
    const sorted = Float64Array.from(this.latencies).sort();
    return {
      calls: sorted.length,
      perSecond: sorted.length / this.seconds,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      cpuMs: this.cpuMs === null ? null : this.cpuMs / sorted.length,
    };
  }
}

export async function runMcpBench(callerCounts: readonly number[] = [1, 10]): Promise<McpBenchRow[]> {
  // The SDK's client adds a listener per request to its transport's signal and leaves it there:
  // thousands of calls would print thousands of warnings.
  setMaxListeners(0);
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-mcp-'));
  const daemon = await startBenchDaemon(dir, UNPACED);
  try {
    const key = (await readFile(join(dir, 'bootstrap.key'), 'utf8')).trim();
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const published = await fetch(`${daemon.url}/admin/flows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ source: FLOW, environment: 'PRODUCTION' }),
    });
    if (!published.ok) throw new Error(`publish: ${published.status} ${await published.text()}`);
    const client = new Client({ name: 'wfx-bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp?wait=60`), { requestInit: { headers } }),
    );
    const viaMcp = async () => {
      const r = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      if (r.isError === true) throw new Error(`tool call: ${JSON.stringify(r.content)}`);
    };
    const body = JSON.stringify({ processId: PROCESS_ID, data: { name: 'Ada' } });
    const viaStart = async () => {
      const res = await fetch(`${daemon.url}/process/start?wait=60`, { method: 'POST', headers, body });
      const answer = (await res.json()) as { state?: string };
      if (res.status !== 200 || answer.state !== 'COMPLETED') throw new Error(`start: ${res.status}`);
    };
    const slice = async (tally: Tally, call: () => Promise<void>, callers: number) => {
      const cpu0 = await mainThreadCpuMs(daemon.pid);
      const t0 = process.hrtime.bigint();
      await inCallers(PER_SLICE, callers, async () => {
        const s = process.hrtime.bigint();
        await call();
        tally.latencies.push(Number(process.hrtime.bigint() - s) / 1e6);
      });
      tally.seconds += Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu1 = await mainThreadCpuMs(daemon.pid);
      tally.cpuMs = cpu0 === null || cpu1 === null || tally.cpuMs === null ? null : tally.cpuMs + cpu1 - cpu0;
    };
    // Warm-up, not measured: V8 compiles both paths first.
    await slice(new Tally(), viaMcp, 10);
    await slice(new Tally(), viaStart, 10);
    const rows: McpBenchRow[] = [];
    for (const callers of callerCounts) {
      const mcp = new Tally();
      const start = new Tally();
      for (let i = 0; i < SLICES; i++) {
        // Each load goes first in every other slice.
        if (i % 2 === 0) await slice(mcp, viaMcp, callers);
        await slice(start, viaStart, callers);
        if (i % 2 === 1) await slice(mcp, viaMcp, callers);
      }
      rows.push({ callers, mcp: mcp.figures(), start: start.figures() });
    }
    await client.close();
    return rows;
  } finally {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatMcpBench(rows: readonly McpBenchRow[]): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const cpu = (n: number | null) => (n === null ? '-' : `${n.toFixed(2)} ms`);
  const lines = [
    `A 3-node flow (start, setVariable, end), each call answered once its execution ended; ${fmt(PER_SLICE * SLICES)} calls a load and row, in ${SLICES} alternating slices. MCP: the SDK's client in the benchmark's process, one session. Start: \`POST /process/start?wait=60\` with fetch.`,
    '',
    '| callers | MCP tools/call a second | p50 | p99 | CPU a call | start?wait= a second | p50 | p99 | CPU a call | MCP / start |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.callers} | **${fmt(r.mcp.perSecond)}** | ${ms(r.mcp.p50Ms)} | ${ms(r.mcp.p99Ms)} | ${cpu(r.mcp.cpuMs)} | **${fmt(r.start.perSecond)}** | ${ms(r.start.p50Ms)} | ${ms(r.start.p99Ms)} | ${cpu(r.start.cpuMs)} | ${(r.mcp.perSecond / r.start.perSecond).toFixed(2)} |`,
    );
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatMcpBench(await runMcpBench());
  console.log(table);
  await writeSection('mcp', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
