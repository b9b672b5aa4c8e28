import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;

t.test('wfx init: a first flow that validates and runs, the schema for editors, .wfx/ out of git', async (t) => {
  const cwd = t.testdir({ '.gitignore': 'node_modules/' });
  const init = await wfxIn(['init'], { cwd });
  t.equal(init.code, 0, init.stderr);
  t.match(
    init.stdout,
    /^created {2}schemas\/flow\.schema\.json .*\ncreated {2}flows\/hello\.yaml .*\ncreated {2}flows\/hello\.test\.yaml .*\ncreated {2}\.gitignore/,
  );
  t.match(init.stdout, /next:\n {2}wfx test .*\n {2}wfx dev .*\n {2}wfx run flows\/hello\.yaml --wait/);
  const flow = readFileSync(join(cwd, 'flows/hello.yaml'), 'utf8');
  t.match(flow, /^# yaml-language-server: \$schema=\.\.\/schemas\/flow\.schema\.json\nprocessId: /, 'the modeline');
  t.match(flow, new RegExp(`^processId: ${UUID.source}`, 'm'), 'a fresh UUID');
  t.same(JSON.parse(readFileSync(join(cwd, 'schemas/flow.schema.json'), 'utf8')).type, 'object');
  t.equal(readFileSync(join(cwd, '.gitignore'), 'utf8'), 'node_modules/\n.wfx/\n', 'appended on a line of its own');

  const again = await wfxIn(['init'], { cwd });
  t.equal(again.code, 0);
  t.match(
    again.stdout,
    /^kept {5}schemas.*\nkept {5}flows\/hello\.yaml.*\nkept {5}flows\/hello\.test\.yaml.*\nkept {5}\.gitignore/,
    'idempotent',
  );
  t.equal(readFileSync(join(cwd, 'flows/hello.yaml'), 'utf8'), flow, 'nothing overwritten');
  t.equal(readFileSync(join(cwd, '.gitignore'), 'utf8'), 'node_modules/\n.wfx/\n', '.wfx/ once');

  t.equal((await wfxIn(['flow', 'validate', 'flows/hello.yaml'], { cwd })).code, 0);
  const tested = await wfxIn(['test'], { cwd });
  t.equal(tested.code, 0, tested.stdout);
  t.match(tested.stdout, /\n2 passed, 0 failed \(2 cases in 1 file, /, "the first flow's cases pass as written");
  await startDaemon(t, { cwd });
  const ran = await wfxIn(['run', 'flows/hello.yaml', '--wait', '--json'], { cwd });
  t.equal(ran.code, 0, ran.stderr);
  t.match(JSON.parse(ran.stdout), { state: 'COMPLETED', output: { greeting: 'Hello, world!' } });
});

t.test('wfx flow new: a file named after the flow, a fresh id each time, never overwritten', async (t) => {
  const cwd = t.testdir({ schemas: { 'flow.schema.json': '{}' } });
  const made = await wfxIn(['flow', 'new', 'Order approval', '--json'], { cwd });
  t.equal(made.code, 0, made.stderr);
  const { file, processId } = JSON.parse(made.stdout) as { file: string; processId: string };
  t.equal(file, join('flows', 'order-approval.yaml'));
  t.match(processId, UUID);
  const text = readFileSync(join(cwd, file), 'utf8');
  t.match(text, /^# yaml-language-server: \$schema=\.\.\/schemas\/flow\.schema\.json\n/);
  t.match(text, /^name: "Order approval"$/m);
  t.equal((await wfxIn(['flow', 'validate', file], { cwd })).code, 0);

  const twice = await wfxIn(['flow', 'new', 'Order approval'], { cwd });
  t.equal(twice.code, 2);
  t.match(twice.stderr, /^FILE_EXISTS: .*order-approval\.yaml exists; wfx never overwrites it/);
  const other = await wfxIn(['flow', 'new', 'Order approval', '--dir', 'more'], { cwd });
  t.equal(other.code, 0);
  t.not(/processId: (\S+)/.exec(readFileSync(join(cwd, 'more/order-approval.yaml'), 'utf8'))![1], processId);
  t.notOk(existsSync(join(cwd, 'flows', 'flow.yaml')));
});

t.test('wfx completion bash: completes commands, subcommands and options in a real bash', async (t) => {
  const cwd = t.testdir({});
  const script = await wfxIn(['completion', 'bash'], { cwd });
  t.equal(script.code, 0);
  writeFileSync(join(cwd, 'wfx.bash'), script.stdout);
  /** What bash offers after `line` (ending in a space: a new word). */
  const complete = (line: string): string[] => {
    const out = execFileSync(
      'bash',
      [
        '-c',
        `source ./wfx.bash; read -ra COMP_WORDS <<< "$LINE"; [[ $LINE == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); _wfx; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { cwd, env: { ...process.env, LINE: line }, encoding: 'utf8' },
    );
    return out.split('\n').filter(Boolean).sort();
  };
  t.same(complete('wfx da'), ['daemon']);
  t.same(complete('wfx daemon st'), ['start', 'status', 'stop']);
  t.same(complete('wfx webhooks l'), ['list', 'listen']);
  t.same(complete('wfx run --ti'), ['--timeout']);
  t.same(complete('wfx --url http://127.0.0.1:1 flow pu'), ['publish'], 'global options skipped');
  t.ok(complete('wfx ').includes('completion'), 'every top-level command');
  t.match((await wfxIn(['completion', 'zsh'], { cwd })).stdout, /bashcompinit[\s\S]*complete -F _wfx wfx/);
  t.match(
    (await wfxIn(['completion', 'fish'], { cwd })).stdout,
    /complete -c wfx -n '__fish_use_subcommand' -a '.*daemon/,
  );
  t.equal((await wfxIn(['completion', 'tcsh'], { cwd })).code, 2, 'an unknown shell is a usage error');
});
