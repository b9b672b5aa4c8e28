import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { createScriptRunner, type ScriptRun, type ScriptRunner } from '../../../src/daemon/engine/work/script.js';
import type { WorkResult } from '../../../src/daemon/outbound/result.js';

function runner(t: Test, options?: { size?: number; memoryBytes?: number }): ScriptRunner {
  const r = createScriptRunner(options);
  t.teardown(() => r.close());
  return r;
}

/**
 * One pool of the default size for the tests that only run scripts in it and read their answers:
 * none of them closes it, sizes it, or leaves a worker stuck (those make a pool of their own).
 */
const shared = runner(t);

const job = (script: string, vars: Record<string, unknown> = {}, timeoutMs = 5_000): ScriptRun => ({
  script,
  vars,
  timeoutMs,
});

function failed(r: WorkResult): { code: string; message: string } {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
  return r;
}

t.test('returns a value computed from vars; undefined comes back as null', async (t) => {
  const r = shared;
  const res = await r.run(
    job('return { total: vars.items.reduce((s, i) => s + i.price, 0), name: vars.name.toUpperCase() }', {
      items: [{ price: 2 }, { price: 3 }],
      name: 'ada',
    }),
  );
  t.same(res, { ok: true, value: { total: 5, name: 'ADA' } });
  t.same(await r.run(job('vars.x = 1')), { ok: true, value: null });
  t.same(await r.run(job('return [1, "a", null, true]')), { ok: true, value: [1, 'a', null, true] });
});

t.test('console lines come back in logs, bounded in number and length', async (t) => {
  const r = shared;
  const res = await r.run(
    job('console.log("hello", 1, {a: [1]}); console.info("i"); console.warn("w"); console.error("e"); return 1'),
  );
  t.same(res, { ok: true, value: 1, logs: ['hello 1 {"a":[1]}', '[info] i', '[warn] w', '[error] e'] });

  const many = await r.run(job('for (let i = 0; i < 500; i++) console.log(String(i).padEnd(5000, "x")); return 2'));
  t.equal(many.ok, true);
  t.equal(many.logs?.length, 100);
  t.ok(many.logs?.every((l) => l.length === 1000));
  t.ok(many.logs?.[99]?.startsWith('99x'));

  // Logs survive a failure.
  const thrown = await r.run(job('console.log("before"); throw new Error("boom")'));
  t.same(thrown.logs, ['before']);
});

t.test('a syntax error is SCRIPT_ERROR', async (t) => {
  const r = shared;
  const f = failed(await r.run(job('return {')));
  t.equal(f.code, 'SCRIPT_ERROR');
  t.match(f.message, /^SyntaxError: /);
});

t.test('a thrown error is SCRIPT_ERROR with its name and message', async (t) => {
  const r = shared;
  t.same(failed(await r.run(job('throw new TypeError("bad input")'))), {
    ok: false,
    code: 'SCRIPT_ERROR',
    message: 'TypeError: bad input',
  });
  const s = failed(await r.run(job('throw "plain"')));
  t.equal(s.code, 'SCRIPT_ERROR');
  t.match(s.message, /plain/);
});

t.test('an endless loop is SCRIPT_TIMEOUT and the pool still works afterwards', async (t) => {
  const r = runner(t, { size: 1 });
  t.same(failed(await r.run(job('while (true) {}', {}, 200))).code, 'SCRIPT_TIMEOUT');
  // A loop that catches everything cannot catch the interrupt.
  t.same(failed(await r.run(job('for (;;) { try { while (true) {} } catch (e) {} }', {}, 200))).code, 'SCRIPT_TIMEOUT');
  // Nor can an endless chain of promise callbacks escape it.
  t.same(
    failed(await r.run(job('function loop() { return Promise.resolve().then(loop) } loop(); return 1', {}, 200))).code,
    'SCRIPT_TIMEOUT',
  );
  t.same(await r.run(job('return vars.n + 1', { n: 1 })), { ok: true, value: 2 });
});

t.test('a worker stuck in native code past timeout + 2 s is terminated and replaced', async (t) => {
  const r = runner(t, { size: 1 });
  // One long native call per iteration: QuickJS polls its interrupt handler too rarely here.
  const f = failed(await r.run(job('for (let i = 0; i < 100000; i++) new Array(2e6).fill(1); return 1', {}, 100)));
  t.equal(f.code, 'SCRIPT_TIMEOUT');
  t.same(await r.run(job('return "alive"')), { ok: true, value: 'alive' });
});

t.test('huge allocations are SCRIPT_MEMORY and the pool still works afterwards', async (t) => {
  const r = runner(t, { size: 1 });
  for (const script of [
    'let a = []; while (true) a.push(new Array(1e6).fill(1))',
    'let a = []; while (true) a.push(new Uint8Array(1 << 20))',
    'let a = []; while (true) a.push({ n: a.length })',
    'return "x".repeat(1e9).length',
  ]) {
    // A time limit no loaded machine reaches first: the memory limit must be what stops these.
    const f = failed(await r.run(job(script, {}, 60_000)));
    t.equal(f.code, 'SCRIPT_MEMORY', script);
  }
  // A smaller limit per run.
  t.equal(
    failed(
      await r.run({
        ...job('let a = []; while (true) a.push(new Uint8Array(1 << 20))', {}, 60_000),
        memoryBytes: 8 * 1024 * 1024,
      }),
    ).code,
    'SCRIPT_MEMORY',
  );
  t.same(await r.run(job('return new Array(1000).fill(1).length')), { ok: true, value: 1000 });
});

t.test('no process, require, import or host escape: each fails cleanly with SCRIPT_ERROR', async (t) => {
  const r = shared;
  const cases: [string, RegExp][] = [
    ['process.exit(1)', /ReferenceError: 'process' is not defined/],
    ["require('fs')", /ReferenceError: 'require' is not defined/],
    ["return import('fs')", /could not load module 'fs'/],
    ["return import('node:child_process').then((m) => m.execSync('id'))", /could not load module/],
    ["await import('fs')", /SyntaxError/],
    ["globalThis.constructor.constructor('return process')()", /ReferenceError: 'process' is not defined/],
    ['return (function () { return this })().process.pid', /TypeError/],
    ['return Deno.readTextFileSync("/etc/passwd")', /ReferenceError/],
    ['return fetch("http://localhost/")', /ReferenceError: 'fetch' is not defined/],
    ['return std.loadFile("/etc/passwd")', /ReferenceError: 'std' is not defined/],
    ['return os.exec(["id"])', /ReferenceError: 'os' is not defined/],
  ];
  for (const [script, message] of cases) {
    const f = failed(await r.run(job(script)));
    t.equal(f.code, 'SCRIPT_ERROR', script);
    t.match(f.message, message, script);
  }
  // The global object holds nothing of the host.
  const host = [
    'process',
    'require',
    'module',
    'exports',
    'Buffer',
    'setTimeout',
    'setInterval',
    'fetch',
    'std',
    'os',
    'scriptArgs',
    'print',
  ];
  const globals = await r.run(
    job('return Object.getOwnPropertyNames(globalThis).filter((k) => vars.host.includes(k))', { host }),
  );
  t.same(globals, { ok: true, value: [] });
});

t.test('prototype pollution and globals do not leak into the next run', async (t) => {
  const r = runner(t, { size: 1 }); // one worker: both runs share it
  const first = await r.run(
    job(`
    Object.prototype.polluted = 'yes';
    Array.prototype.map = () => 'hijacked';
    JSON.stringify = () => '"hijacked"';
    globalThis.leak = 1;
    console.log = () => {};
    return { done: true }`),
  );
  t.same(first, { ok: true, value: { done: true } });
  const second = await r.run(
    job(`
    console.log('seen');
    return { polluted: ({}).polluted ?? null, map: [1, 2].map((x) => x * 2), leak: typeof leak, json: JSON.stringify({ a: 1 }) }`),
  );
  t.same(second, {
    ok: true,
    value: { polluted: null, map: [2, 4], leak: 'undefined', json: '{"a":1}' },
    logs: ['seen'],
  });
});

t.test('deep recursion fails cleanly', async (t) => {
  const r = runner(t, { size: 1 });
  const f = failed(await r.run(job('function f() { return f() } f()')));
  t.equal(f.code, 'SCRIPT_ERROR');
  t.match(f.message, /stack overflow/);
  const nested = failed(await r.run(job('JSON.parse("[".repeat(200000) + "]".repeat(200000))')));
  t.equal(nested.code, 'SCRIPT_ERROR');
  t.same(await r.run(job('function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(500)')), {
    ok: true,
    value: 500,
  });
});

t.test('a return value that is not JSON is SCRIPT_RESULT', async (t) => {
  const r = shared;
  for (const script of [
    'return { n: 10n }',
    'const a = {}; a.self = a; return a',
    'return () => 1',
    'return Symbol("s")',
  ]) {
    t.equal(failed(await r.run(job(script))).code, 'SCRIPT_RESULT', script);
  }
});

t.test('a returned promise is awaited; promise callbacks run', async (t) => {
  const r = shared;
  t.same(await r.run(job('return (async () => ({ v: await Promise.resolve(vars.v) }))()', { v: 3 })), {
    ok: true,
    value: { v: 3 },
  });
  t.same(await r.run(job('Promise.resolve(1).then((v) => console.log("then", v)); return 0')), {
    ok: true,
    value: 0,
    logs: ['then 1'],
  });
  t.same(failed(await r.run(job('return Promise.reject(new RangeError("no"))'))), {
    ok: false,
    code: 'SCRIPT_ERROR',
    message: 'RangeError: no',
  });
  t.equal(failed(await r.run(job('return new Promise(() => {})'))).code, 'SCRIPT_RESULT');
});

t.test('an aborted signal cancels a queued or running job', async (t) => {
  const r = runner(t, { size: 1 });

  const already = new AbortController();
  already.abort();
  t.same(failed(await r.run(job('return 1'), already.signal)).code, 'CANCELLED');

  // The first job is dispatched at once (the pool has a free slot): aborting it terminates its worker.
  const running = new AbortController();
  const busy = r.run(job('while (true) {}', {}, 60_000), running.signal);
  const queuedCtl = new AbortController();
  const queued = r.run(job('return "never"'), queuedCtl.signal);
  const after = r.run(job('return "after"'));
  queuedCtl.abort();
  t.equal(failed(await queued).code, 'CANCELLED');
  running.abort();
  t.equal(failed(await busy).code, 'CANCELLED');
  t.same(await after, { ok: true, value: 'after' });
  // Aborting after the end changes nothing.
  running.abort();
  t.same(await r.run(job('return "still"')), { ok: true, value: 'still' });
});

t.test('jobs beyond the pool size queue and all complete', async (t) => {
  const r = runner(t, { size: 2 });
  const results = await Promise.all(
    Array.from({ length: 9 }, (_, i) =>
      r.run(job('let s = 0; for (let k = 0; k < 10000; k++) s += k; return { i: vars.i, s }', { i })),
    ),
  );
  t.same(
    results,
    Array.from({ length: 9 }, (_, i) => ({ ok: true, value: { i, s: 49995000 } })),
  );
});

t.test('close() cancels what is pending and later runs', async (t) => {
  const r = createScriptRunner({ size: 1 });
  t.teardown(() => r.close());
  const busy = r.run(job('while (true) {}', {}, 60_000));
  const queued = r.run(job('return 1'));
  await r.close();
  t.equal(failed(await busy).code, 'CANCELLED');
  t.equal(failed(await queued).code, 'CANCELLED');
  t.equal(failed(await r.run(job('return 1'))).code, 'CANCELLED');
  await r.close(); // twice is fine
});

/** Runs an ES module in a fresh node process; resolves with its exit code, signal and output. */
function node(source: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 30_000,
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

const moduleUrl = new URL('../../../src/daemon/engine/work/script.js', import.meta.url).href;

t.test('idle workers never keep a process alive; close() ends a running one', async (t) => {
  const idle = await node(`
    import { createScriptRunner } from ${JSON.stringify(moduleUrl)};
    const r = createScriptRunner({ size: 2 });
    const res = await Promise.all([r.run({ script: 'return 1', vars: {}, timeoutMs: 5000 }), r.run({ script: 'return 2', vars: {}, timeoutMs: 5000 })]);
    console.log(JSON.stringify(res));
    // no close(): the process must still exit on its own`);
  t.same({ code: idle.code, signal: idle.signal }, { code: 0, signal: null });
  t.same(JSON.parse(idle.out), [
    { ok: true, value: 1 },
    { ok: true, value: 2 },
  ]);

  const busy = await node(`
    import { createScriptRunner } from ${JSON.stringify(moduleUrl)};
    const r = createScriptRunner();
    const p = r.run({ script: 'while (true) {}', vars: {}, timeoutMs: 600000 });
    await r.close();
    console.log(JSON.stringify(await p));`);
  t.same({ code: busy.code, signal: busy.signal }, { code: 0, signal: null });
  t.equal(JSON.parse(busy.out).code, 'CANCELLED');
});
