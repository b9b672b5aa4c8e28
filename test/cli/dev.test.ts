import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { callDaemon, spawnWfx, stepThroughLines, wfxIn, type CliResult } from '../helpers/cli.js';

const flow = (name: string) => `processId: 2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182
name: ${name}
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx dev publishes flows/ to DEVELOPMENT at start and again when a file changes', async (t) => {
  const cwd = t.testdir({ flows: { 'hello.yaml': flow('Hello') } });
  const child = spawnWfx(t, ['dev', '--port', '0'], { cwd });
  const exited = once(child, 'exit');
  const steps = [
    {
      until: /wfx dev: daemon on http:\/\/127\.0\.0\.1:\d+/,
      then: () => writeFile(join(cwd, 'flows', 'hello.yaml'), flow('Hello again')),
    },
    {
      until: /published "Hello again" \(version 2\) to DEVELOPMENT/,
      then: () => writeFile(join(cwd, 'flows', 'broken.yaml'), flow('Broken').replace('next: done', 'next: nowhere')),
    },
    { until: /broken\.yaml:4:36: start\.next: connects to "nowhere"/, then: async () => void child.kill('SIGINT') },
  ];
  const { seen, taken: step } = await stepThroughLines(child.stdout, steps);
  const [code] = await exited;
  t.equal(step, steps.length, 'every step was seen');
  t.ok(
    seen.some((l) => /published "Hello" \(version 1\) to DEVELOPMENT/.test(l)),
    'published at start',
  );
  t.equal(code, 0, 'Ctrl-C stops it gracefully');
  t.equal(seen.filter((l) => /connects to \\?"nowhere/.test(l)).length, 1, 'each problem printed once');
});

t.test(
  "under wfx dev: env values go to DEVELOPMENT, and a second file with a flow's processId is refused",
  async (t) => {
    const cwd = t.testdir({ flows: { 'hello.yaml': flow('Hello') } });
    const child = spawnWfx(t, ['dev', '--port', '0'], { cwd });
    const exited = once(child, 'exit');
    const said: CliResult[] = [];
    const steps = [
      {
        until: /published "Hello" \(version 1\) to DEVELOPMENT/,
        then: async () => {
          said.push(await wfxIn(['env', 'set', 'API_URL', 'http://127.0.0.1:9/dev'], { cwd }));
          said.push(await wfxIn(['env', 'set', 'API_URL', 'http://127.0.0.1:9/prod', '--env', 'PRODUCTION'], { cwd }));
          said.push(await wfxIn(['env', 'list'], { cwd }));
          await writeFile(join(cwd, 'flows', 'copy.yaml'), flow('Copy'));
        },
      },
      {
        until: /copy\.yaml:1:1: .*also the processId of hello\.yaml.*DUPLICATE_PROCESS_ID/,
        then: async () => void child.kill('SIGINT'),
      },
    ];
    const { taken: step } = await stepThroughLines(child.stdout, steps);
    await exited;
    t.equal(step, steps.length, 'every step was seen: the copy was refused, naming hello.yaml');
    const [dev, prod, list] = said;
    t.equal(dev!.stdout, "API_URL set in DEVELOPMENT (wfx dev's environment; --env PRODUCTION for the other)\n");
    t.equal(prod!.stdout, 'API_URL set in PRODUCTION\n');
    t.match(
      list!.stdout,
      /^ENVIRONMENT\s+NAME\s+VALUE\nPRODUCTION\s+API_URL\s+http:\/\/127\.0\.0\.1:9\/prod\nDEVELOPMENT\s+API_URL\s+http:\/\/127\.0\.0\.1:9\/dev\n$/,
    );
  },
);

t.test('wfx dev publishes a file refused for an unknown webhook once the webhook is created', async (t) => {
  const hook = `processId: 5e6f7081-92a3-4b4c-8d5e-6f708192a3b4
name: Hook
triggers:
  - { type: webhook, webhook: github, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
  const cwd = t.testdir({ flows: { 'hook.yaml': hook } });
  const child = spawnWfx(t, ['dev', '--port', '0'], { cwd });
  const exited = once(child, 'exit');
  let created: Promise<CliResult> | null = null;
  // Refused at start, at the trigger's place; once the daemon also serves (the two lines come in
  // either order), the webhook the flow names is created, and the file is published.
  let refused = false;
  let serving = false;
  let published = false;
  for await (const line of createInterface({ input: child.stdout })) {
    if (/hook\.yaml:4:\d+: triggers\.0\.webhook: .*\[UNKNOWN_WEBHOOK\]/.test(line)) refused = true;
    if (/wfx dev: daemon on http:\/\/127\.0\.0\.1:\d+/.test(line)) serving = true;
    if (refused && serving && !created)
      created = wfxIn(['webhooks', 'create', '--name', 'github', '--provider', 'GITHUB'], { cwd });
    if (created && !published && /published "Hook" \(version 1\) to DEVELOPMENT/.test(line)) {
      published = true;
      child.kill('SIGINT');
    }
  }
  const [code] = await exited;
  t.ok(refused && published, 'refused, then published without touching the file');
  t.equal((await created!)?.code, 0, 'the webhook was created');
  t.equal(code, 0);
});

t.test("wfx dev --test runs the flows' tests at start and after each change", async (t) => {
  const greet = (greeting: string) => `processId: 1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5e
name: Greet
nodes:
  start: { type: startEvent, next: greet }
  greet: { type: setVariable, variables: { greeting: ${greeting} }, next: done }
  done: { type: endEvent }
`;
  const cwd = t.testdir({
    flows: {
      'greet.yaml': greet('hello'),
      'greet.test.yaml':
        'flow: greet.yaml\ncases:\n  - name: says hello\n    expect: { variables: { greeting: hello } }\n',
    },
  });
  const child = spawnWfx(t, ['dev', '--port', '0', '--test'], { cwd });
  const exited = once(child, 'exit');
  // Each run's coverage is kept by the daemon for the version it ran, for the console to draw.
  let url = '';
  const coverage: unknown[] = [];
  const readCoverage = async () => {
    const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const read = await callDaemon(url, key, 'GET', '/admin/flows/1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5e/coverage');
    coverage.push((read.body.items as Array<{ version: string; cases: unknown }>).map((c) => [c.version, c.cases]));
  };
  const steps = [
    {
      until: /published to DEVELOPMENT on change, tests run/,
      then: async (line: string) => void (url = /daemon on (http:\/\/\S+);/.exec(line)?.[1] ?? ''),
    },
    {
      until: /^1 passed, 0 failed \(1 case in 1 file/,
      then: async () => {
        await readCoverage();
        await writeFile(join(cwd, 'flows', 'greet.yaml'), greet('howdy'));
      },
    },
    { until: /published "Greet" \(version 2\) to DEVELOPMENT/, then: async () => undefined },
    {
      until: /^0 passed, 1 failed \(1 case in 1 file/,
      then: async () => {
        await readCoverage();
        child.kill('SIGINT');
      },
    },
  ];
  const { seen, taken: step } = await stepThroughLines(child.stdout, steps);
  const [code] = await exited;
  t.equal(step, steps.length, `every step was seen:\n${seen.join('\n')}`);
  t.equal(code, 0);
  t.ok(
    seen.some((l) => /variable "greeting" differs/.test(l)),
    'the failure said why',
  );
  t.notOk(
    seen.some((l) => /greet\.test\.yaml.*(problem|invalid|SCHEMA)/i.test(l)),
    'the test file is not published as a flow',
  );
  t.same(
    coverage,
    [
      [['1', { passed: 1, failed: 0 }]],
      [
        ['2', { passed: 0, failed: 1 }],
        ['1', { passed: 1, failed: 0 }],
      ],
    ],
    "each run's coverage kept for the version it ran, newest first",
  );
});
