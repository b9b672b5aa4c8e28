import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { PROMETHEUS_SKIP, startPrometheus, type PromSample } from '../helpers/prometheus.js';

const OK = '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const BAD = '6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const ASK = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const TOKEN = 'prometheus-scraper-token-0123456789';
const FILES = {
  'ok.yaml': `processId: ${OK}
name: Ok
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`,
  'bad.yaml': `processId: ${BAD}
name: Bad
nodes:
  s: { type: startEvent, next: boom }
  boom: { type: scriptTask, script: "throw new Error('no')", next: e }
  e: { type: endEvent }
`,
  'ask.yaml': `processId: ${ASK}
name: Ask
nodes:
  s: { type: startEvent, next: ask }
  ask: { type: userTask, next: e }
  e: { type: endEvent }
`,
  'metrics.token': `${TOKEN}\n`,
  'short.token': 'too-short\n',
  prometheus: {},
};
const RUNS = { [OK]: 24, [BAD]: 9, [ASK]: 1 } as const;

/** The value of the one sample of `samples`, or null when there is not exactly one. */
const only = (samples: PromSample[]): number | null => (samples.length === 1 ? samples[0]!.value : null);

t.test(
  'a real Prometheus scrapes a real daemon with its token: the counts it stores match the executions run',
  { skip: PROMETHEUS_SKIP },
  async (t) => {
    const cwd = t.testdir(FILES);
    const tokenFile = join(cwd, 'metrics.token');
    const info = await startDaemon(t, { cwd, args: ['--metrics-token-file', tokenFile] });
    const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    for (const f of ['ok.yaml', 'bad.yaml', 'ask.yaml'])
      t.equal((await wfxIn(['flow', 'publish', f], { cwd })).code, 0, `publish ${f}`);

    // The daemon's side of the token: a scraper without it, or with another, is refused.
    const scrape = (authorization?: string) =>
      fetch(`${info.url}/metrics`, { ...(authorization && { headers: { authorization } }) });
    const bare = await scrape();
    t.equal(bare.status, 401);
    t.equal(((await bare.json()) as { error: string }).error, 'UNAUTHORIZED');
    t.equal((await scrape(`Bearer ${TOKEN}x`)).status, 401, 'another token');
    t.equal((await scrape(`Bearer ${TOKEN}`)).status, 200, 'the token of --metrics-token-file');

    const prom = await startPrometheus(t, join(cwd, 'prometheus'), new URL(info.url).host, tokenFile);
    await eventually('Prometheus scrapes the daemon', async () => only(await prom.query('up{job="wfx"}')) === 1, {
      withinMs: 60_000,
      maxPauseMs: 250,
    });

    // The load: executions that complete, fail with SCRIPT_ERROR, and wait at a user task.
    const exec = (processId: string) =>
      callDaemon(info.url, key, 'POST', '/process/start', { processId, data: {} }).then((r) => r.status);
    const statuses = await Promise.all(
      Object.entries(RUNS).flatMap(([flow, n]) => Array.from({ length: n }, () => exec(flow))),
    );
    t.same(
      statuses.filter((s) => s !== 200),
      [],
      'every execution started',
    );

    const count = async (promql: string) => only(await prom.query(promql));
    await eventually(
      'Prometheus holds the final counts',
      async () =>
        (await count(`wfx_executions_completed_total{flow="${OK}"}`)) === RUNS[OK] &&
        (await count(`wfx_executions_failed_total{flow="${BAD}",code="SCRIPT_ERROR"}`)) === RUNS[BAD] &&
        (await count(`wfx_executions_running{flow="${ASK}",waiting="true"}`)) === 1,
      { withinMs: 60_000, maxPauseMs: 250 },
    );
    for (const [flow, n] of Object.entries(RUNS))
      t.equal(await count(`wfx_executions_started_total{flow="${flow}"}`), n, `started: ${flow}`);
    t.equal(await count(`wfx_executions_completed_total{flow="${OK}"}`), RUNS[OK], 'completed');
    t.equal(await count(`sum(wfx_executions_failed_total)`), RUNS[BAD], 'failed, all codes');
    t.equal(
      await count(`wfx_executions_failed_total{flow="${BAD}",code="SCRIPT_ERROR"}`),
      RUNS[BAD],
      'failed, by code',
    );
    t.equal(await count('sum(wfx_executions_completed_total)'), RUNS[OK], 'completed, all flows: no other');
    t.equal(await count(`wfx_executions_running{flow="${ASK}",waiting="true"}`), 1, 'one waits at its input');
    t.equal(await count('wfx_tasks_waiting'), 1, 'its user task');
    t.equal(await count(`wfx_node_failures_total{type="scriptTask"}`), RUNS[BAD]);
    t.equal(
      await count('wfx_http_requests_total{route="/process/start",method="POST",status="200"}'),
      RUNS[OK] + RUNS[BAD] + RUNS[ASK],
      'HTTP requests by route pattern',
    );
  },
);

t.test('wfx daemon start refuses a metrics token file it cannot use, with USAGE_ERROR', async (t) => {
  const cwd = t.testdir(FILES);
  for (const file of ['short.token', 'missing.token']) {
    const res = await wfxIn(['daemon', 'start', '--port', '0', '--json', '--metrics-token-file', join(cwd, file)], {
      cwd,
    });
    t.not(res.code, 0, `${file}: not started`);
    t.match(res.stderr, /USAGE_ERROR/, `${file}: its code`);
  }
});
