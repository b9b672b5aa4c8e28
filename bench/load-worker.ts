/**
 * The HTTP load generator of bench/http.ts, in a process of its own: autocannon runs here with
 * nothing else on the heap. In the bench process itself it shared its event loop and its GC with
 * what the bench had built before (the store and engine benches' garbage, the ids of 60,000
 * waiting executions), and each of its pauses counted in the latencies it measured.
 *
 * Protocol (IPC): the parent sends one LoadSpec; this process answers with one LoadOutcome and exits.
 */
import autocannon from 'autocannon';

/** Where the requests go. */
interface Target {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly connections: number;
  readonly headers: Record<string, string>;
}

/**
 * A load: one body for every request for `seconds` (after `warmupSeconds` more, not measured),
 * or one request per body, in order (the first `warmupCount` as a warm-up, then the rest).
 */
export type LoadSpec = Target &
  (
    | { readonly body: string; readonly seconds: number; readonly warmupSeconds: number }
    | { readonly bodies: readonly string[]; readonly warmupCount: number }
  );

/**
 * Two loads of one body each, measured in turns: a warm-up of each, then `slices` rounds of a
 * slice of `sliceSeconds` of the first and one of the second. Both see the same host.
 */
export interface InterleavedSpec {
  readonly interleave: readonly [Target & { readonly body: string }, Target & { readonly body: string }];
  readonly slices: number;
  readonly sliceSeconds: number;
  readonly warmupSeconds: number;
}

export interface LoadPart {
  readonly total: number;
  readonly seconds: number;
  readonly failed: number;
  /** Each 2xx response's latency in ms, in the order they came. */
  readonly latencies: number[];
}

/** What the load measured, and its warm-up (the same client process, just before). */
export interface LoadOutcome {
  readonly warmup: LoadPart | null;
  readonly measured: LoadPart;
}

/** Each side of an interleaved load: its slices together, and its warm-up. */
export type InterleavedOutcome = readonly [LoadOutcome, LoadOutcome];

async function part(spec: LoadSpec, run: { seconds: number } | { from: number; to: number }): Promise<LoadPart> {
  let opts: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    connections: spec.connections,
    headers: spec.headers,
  };
  if ('bodies' in spec && 'from' in run) {
    const { bodies } = spec;
    let next = run.from;
    opts = {
      ...opts,
      amount: run.to - run.from,
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++]! }) }],
    };
  } else if ('body' in spec && 'seconds' in run) opts = { ...opts, duration: run.seconds, body: spec.body };
  const t0 = process.hrtime.bigint();
  // Without a callback autocannon returns its event emitter made thenable (the types say a promise).
  const instance = autocannon(opts) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  // Each response's latency as measured (a fraction of a millisecond included): autocannon's own
  // percentiles come from a histogram of whole milliseconds, where 5.9 ms reads as 5.
  const latencies: number[] = [];
  let last = t0;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    last = process.hrtime.bigint();
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const r = await instance;
  // Until the last response, not until autocannon resolves: it stops only on its next one-second
  // tick, so a run of a fixed amount (the resume loads) that took 13.2 s counted as 14.
  const seconds = Number(last - t0) / 1e9;
  return { total: r.requests.total, seconds, failed: r.errors + r.timeouts + r.non2xx, latencies };
}

async function run(spec: LoadSpec): Promise<LoadOutcome> {
  if ('bodies' in spec) {
    const warm = spec.warmupCount;
    const warmup = warm > 0 ? await part(spec, { from: 0, to: warm }) : null;
    return { warmup, measured: await part(spec, { from: warm, to: spec.bodies.length }) };
  }
  const warmup = spec.warmupSeconds > 0 ? await part(spec, { seconds: spec.warmupSeconds }) : null;
  return { warmup, measured: await part(spec, { seconds: spec.seconds }) };
}

/** The slices of each side added up: requests, seconds, failures and latencies. */
function sum(parts: readonly LoadPart[]): LoadPart {
  const latencies: number[] = [];
  for (const p of parts) for (const l of p.latencies) latencies.push(l);
  return {
    total: parts.reduce((n, p) => n + p.total, 0),
    seconds: parts.reduce((n, p) => n + p.seconds, 0),
    failed: parts.reduce((n, p) => n + p.failed, 0),
    latencies,
  };
}

async function interleave(spec: InterleavedSpec): Promise<InterleavedOutcome> {
  const timed = (target: Target & { readonly body: string }, seconds: number) =>
    part({ ...target, seconds, warmupSeconds: 0 }, { seconds });
  const [a, b] = spec.interleave;
  const warmA = await timed(a, spec.warmupSeconds);
  const warmB = await timed(b, spec.warmupSeconds);
  const slicesA: LoadPart[] = [];
  const slicesB: LoadPart[] = [];
  for (let i = 0; i < spec.slices; i++) {
    slicesA.push(await timed(a, spec.sliceSeconds));
    slicesB.push(await timed(b, spec.sliceSeconds));
  }
  return [
    { warmup: warmA, measured: sum(slicesA) },
    { warmup: warmB, measured: sum(slicesB) },
  ];
}

process.once('message', (spec: LoadSpec | InterleavedSpec) => {
  ('interleave' in spec ? interleave(spec) : run(spec)).then(
    (outcome) => process.send!(outcome, () => process.disconnect()),
    (err: unknown) => {
      process.stderr.write(`load worker: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
});
