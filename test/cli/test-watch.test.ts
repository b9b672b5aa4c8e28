import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { spawnWfx, stepThroughLines } from '../helpers/cli.js';

const FLOW = (greeting: string) => `processId: 0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0
name: Greet
nodes:
  start: { type: startEvent, next: greet }
  greet: { type: setVariable, variables: { greeting: ${greeting} }, next: end }
  end: { type: endEvent }
`;

const TESTS = `flow: greet.yaml
cases:
  - name: says hello
    expect: { variables: { greeting: hello } }
`;

t.test('wfx test --watch runs again when the flow or its test file changes, until Ctrl-C', async (t) => {
  const cwd = t.testdir({ 'greet.yaml': FLOW('hello'), 'greet.test.yaml': TESTS });
  const child = spawnWfx(t, ['test', '--watch'], { cwd });
  const exited = once(child, 'exit');
  // Ready once it says it watches (stderr); then each change, each run seen on stdout.
  await new Promise<void>((ready) =>
    createInterface({ input: child.stderr }).on('line', (l) => {
      if (/^watching \. for changes; Ctrl-C to stop$/.test(l)) ready();
    }),
  );
  const steps = [
    {
      until: /^1 passed, 0 failed \(1 case in 1 file, \d+ ms\)$/,
      then: () => writeFile(join(cwd, 'greet.yaml'), FLOW('howdy')),
    },
    { until: /^-- \d\d:\d\d:\d\d greet\.yaml changed: running again$/, then: async () => undefined },
    {
      until: /^0 passed, 1 failed/,
      then: () => writeFile(join(cwd, 'greet.test.yaml'), TESTS.replace('greeting: hello', 'greeting: howdy')),
    },
    { until: /^-- \d\d:\d\d:\d\d greet\.test\.yaml changed: running again$/, then: async () => undefined },
    { until: /^1 passed, 0 failed/, then: async () => void child.kill('SIGINT') },
  ];
  const { seen, taken: step } = await stepThroughLines(child.stdout, steps);
  const [code] = await exited;
  t.equal(step, steps.length, `every step was seen:\n${seen.join('\n')}`);
  t.equal(code, 0, "Ctrl-C stops it; the exit code is the last run's");
  t.ok(
    seen.some((l) => /variable "greeting" differs/.test(l)),
    'the failing run said why',
  );
});
