import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t, { type Test } from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { callDaemon, startDaemon, wfxIn } from '../../helpers/cli.js';

const GOOD = `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Good
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test('wfx flow validate: exit 0 when valid, 2 with file:line:column problems', async (t) => {
  const dir = t.testdir({ 'good.yaml': GOOD, 'bad.yaml': GOOD.replace('next: done', 'next: ghost') });
  const good = await wfxIn(['flow', 'validate', 'good.yaml'], { cwd: dir });
  t.equal(good.code, 0);
  t.equal(good.stdout, 'good.yaml: ok\n');
  const bad = await wfxIn(['flow', 'validate', 'good.yaml', 'bad.yaml'], { cwd: dir });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^bad\.yaml:4:36: start\.next: connects to "ghost".*\[UNKNOWN_TARGET\]$/m);
  t.match(bad.stderr, /^bad\.yaml:5:9: done: .*\[UNREACHABLE\]$/m);
  t.match(bad.stderr, /FLOW_INVALID: 2 problems in 1 of 2 files/);
  const json = await wfxIn(['flow', 'validate', 'bad.yaml', '--json'], { cwd: dir });
  t.equal(json.code, 2);
  t.match(JSON.parse(json.stdout), [
    { file: 'bad.yaml', ok: false, problems: [{ code: 'UNKNOWN_TARGET', nodeId: 'start', line: 4 }] },
  ]);
  t.equal(json.stderr, '', '--json prints nothing else');
  const missing = await wfxIn(['flow', 'validate', 'nope.yaml'], { cwd: dir });
  t.equal(missing.code, 2);
  t.match(missing.stderr, /^USAGE_ERROR: cannot read nope\.yaml: ENOENT/);
});

t.test('wfx flow schema prints the JSON Schema', async (t) => {
  const res = await wfxIn(['flow', 'schema']);
  t.equal(res.code, 0);
  t.match(JSON.parse(res.stdout), { $schema: /draft-07/, required: ['processId', 'name', 'nodes'] });
});

const TOOL = '11111111-1111-4111-8111-111111111111';
const AGENT = '22222222-2222-4222-8222-222222222222';
const LOOKUP = `processId: ${TOOL}
name: Look up order
description: Finds an order
inputs:
  type: object
  required: [orderId]
  properties:
    orderId: { type: string, description: "The order id, such as A-1001" }
    notify: { type: boolean, default: true, description: Tell the customer }
    channel: { enum: [email, sms], default: email }
    lines: { type: array }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const SUPPORT = `processId: ${AGENT}
name: Support agent
nodes:
  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: "Help with {orderId}", tools: [${TOOL}], next: done }
  done: { type: endEvent }
`;

t.test('wfx flow against a daemon', async (t) => {
  // One daemon; each test in an organization of its own (its flows, its keys), with its files in
  // a directory of its own, as with a daemon of its own. A processId belongs to one organization:
  // two tests never publish the same one.
  const { url } = await startDaemon(t, { cwd: t.testdir({}) });
  const system = (await readFile(join(t.testdirName, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  let organizations = 0;
  /** A directory of `files` for test `t`, an admin key of a new organization, and `wfx` run in-process with it there. */
  const organization = async (t: Test, files: Record<string, string>) => {
    const cwd = t.testdir(files);
    const name = `flows-${++organizations}`;
    const made = await callDaemon(url, system, 'POST', '/admin/api-keys', {
      name: 'admin',
      role: 'admin',
      organization: name,
    });
    const key = made.body.apiKey as string;
    const run = (args: string[]) => wfxIn(['--url', url, '--api-key', key, ...args], { cwd });
    return { cwd, key, run, organization: name };
  };

  await t.test(
    'wfx flow publish: tool flows first, whatever the order on the command line; flow show lists inputs',
    async (t) => {
      const { run } = await organization(t, { 'agent.yaml': SUPPORT, 'tool.yaml': LOOKUP, 'good.yaml': GOOD });

      const published = await run(['flow', 'publish', 'agent.yaml', 'tool.yaml']);
      t.equal(published.code, 0, published.stderr);
      t.equal(
        published.stdout,
        `tool.yaml: Look up order version 1 active in PRODUCTION (${TOOL})\nagent.yaml: Support agent version 1 active in PRODUCTION (${AGENT})\n`,
        'the tool is published before the agent that uses it',
      );

      const shown = await run(['flow', 'show', TOOL]);
      t.equal(shown.code, 0, shown.stderr);
      const table = shown.stdout.slice(
        shown.stdout.indexOf('inputs of version 1:'),
        shown.stdout.indexOf('definition of'),
      );
      t.same(
        table
          .trimEnd()
          .split('\n')
          .map((l) => l.trimEnd().split(/ {2,}/)),
        [
          ['inputs of version 1:'],
          ['NAME', 'TYPE', 'REQUIRED', 'DEFAULT', 'DESCRIPTION'],
          ['orderId', 'string', 'yes', '-', 'The order id, such as A-1001'],
          ['notify', 'boolean', 'no', 'true', 'Tell the customer'],
          ['channel', '"email"|"sms"', 'no', '"email"'],
          ['lines', 'array', 'no', '-'],
        ],
      );
      t.match(shown.stdout, /definition of version 1:\n\{/, 'then the definition');
      const alias = await run(['flow', 'get', TOOL]);
      t.equal(alias.stdout, shown.stdout, 'flow get is flow show');

      t.equal((await run(['flow', 'publish', 'good.yaml'])).code, 0);
      const none = await run(['flow', 'show', '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11']);
      t.match(none.stdout, /\ninputs: any object \(the flow declares no inputs:\)\n/, 'a flow without inputs says so');
      const json = await run(['flow', 'show', TOOL, '--json']);
      t.match(JSON.parse(json.stdout), {
        version: '1',
        versions: [{ version: '1', inputs: { required: ['orderId'] } }],
      });
    },
  );

  await t.test('wfx flow publish: an agent whose tool is not among the files nor published is refused', async (t) => {
    // An agent and a tool of their own: another test publishes SUPPORT's, in another organization.
    const agent = SUPPORT.replace(AGENT, '44444444-4444-4444-8444-444444444444').replace(
      TOOL,
      '11111111-1111-4111-8111-000000000000',
    );
    const { run } = await organization(t, { 'agent.yaml': agent });
    const res = await run(['flow', 'publish', 'agent.yaml']);
    t.equal(res.code, 2);
    // Line 5, at the tool's id in the flow list: the daemon's check located in the source.
    t.match(res.stderr, /^agent\.yaml:5:68: agent\.tools\.0: tool flow 1{8}-.* does not exist .*\[UNKNOWN_TOOL\]$/m);
    t.match(res.stderr, /FLOW_INVALID: 1 of 1 file not published/);
  });

  await t.test(
    'wfx flow list: TRIGGERS and --trigger; the name of the version that runs, as wfx run finds it',
    async (t) => {
      const flow = (id: string, name: string, triggers: string) => `processId: ${id}
name: ${name}
${triggers}nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
      const MONTHLY = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
      const { run: wfx } = await organization(t, {
        'by-hand.yaml': flow(MONTHLY, 'Month end', 'triggers:\n  - { type: on-demand, description: at month end }\n'),
        'renamed.yaml': flow(MONTHLY, 'Month end, renamed', 'triggers:\n  - { type: schedule, cron: "0 6 1 * *" }\n'),
        'nightly.yaml': flow(
          '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a',
          'Nightly',
          'triggers:\n  - { type: schedule, cron: "0 2 * * *" }\n  - { type: schedule, cron: "0 3 * * *" }\n  - { type: on-demand }\n',
        ),
        'plain.yaml': flow('3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6a7b', 'Plain', ''),
      });
      const run = (...args: string[]) => wfx(args);
      t.equal((await run('flow', 'publish', 'by-hand.yaml', 'nightly.yaml', 'plain.yaml')).code, 0);
      // A newer version, renamed, runs only in DEVELOPMENT: PRODUCTION still runs "Month end".
      t.equal((await run('flow', 'publish', 'renamed.yaml', '--env', 'DEVELOPMENT')).code, 0);

      const listed = await run('flow', 'list');
      t.equal(listed.code, 0, listed.stderr);
      t.match(listed.stdout, /^PROCESS ID\s+NAME\s+VERSIONS\s+PRODUCTION\s+DEVELOPMENT\s+TRIGGERS$/m);
      t.match(
        listed.stdout,
        new RegExp(`^${MONTHLY}\\s+Month end\\s+2\\s+1\\s+2\\s+on-demand$`, 'm'),
        'the running version',
      );
      t.match(listed.stdout, /^\S+\s+Nightly\s+1\s+1\s+-\s+schedule,on-demand$/m, 'each type once');
      t.match(listed.stdout, /^\S+\s+Plain\s+1\s+1\s+-\s+-$/m, 'none: -');

      const byHand = JSON.parse((await run('flow', 'list', '--trigger', 'on-demand', '--json')).stdout) as Array<{
        name: string;
        triggers: string[];
      }>;
      t.same(
        byHand.map((f) => f.name).sort(),
        ['Month end', 'Nightly'],
        '--trigger on-demand: the flows meant to be started by hand',
      );
      t.match(
        (await run('flow', 'list', '--trigger', 'email')).stdout,
        /^PROCESS ID.*\n$/,
        'none has one: the header only',
      );
      t.equal((await run('flow', 'list', '--trigger', 'cron')).code, 2, 'a type that is none: a usage error');

      // The name flow list shows is the one wfx run takes.
      const started = await run('run', 'Month end', '--json');
      t.equal(started.code, 0, started.stderr);
      t.match(JSON.parse(started.stdout), { processId: MONTHLY });
      t.match((await run('run', 'Month end, renamed')).stderr, /^PROCESS_NOT_FOUND: /m, 'not the newest, unrun name');
    },
  );

  await t.test(
    'wfx flow promote: production runs the version development runs, the same number and source',
    async (t) => {
      // Flows of their own: a processId belongs to one organization, and another test publishes these.
      const PID = '0c8d7b4f-3a1f-4b68-8b54-4e5a2d0f9c22';
      const LOOKUP_ID = '33333333-3333-4333-8333-333333333333';
      const {
        cwd,
        run,
        key,
        organization: org,
      } = await organization(t, {
        'good.yaml': GOOD.replace('0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11', PID),
        'tool.yaml': LOOKUP.replace(TOOL, LOOKUP_ID),
      });
      t.equal((await run(['flow', 'publish', 'good.yaml'])).code, 0, 'version 1, in production');
      await writeFile(
        join(cwd, 'good.yaml'),
        GOOD.replace('0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11', PID).replace(/^name: (.*)$/m, 'name: $1, again'),
      );
      t.equal(
        (await run(['flow', 'publish', 'good.yaml', '--env', 'DEVELOPMENT'])).code,
        0,
        'version 2, in development',
      );

      const promoted = await run(['flow', 'promote', PID, '--from', 'DEVELOPMENT', '--to', 'PRODUCTION']);
      t.equal(promoted.code, 0, promoted.stderr);
      t.equal(
        promoted.stdout,
        `${PID}: version 2 active in PRODUCTION (as in DEVELOPMENT; PRODUCTION ran version 1)\n`,
      );
      const flow = await callDaemon(url, key, 'GET', `/admin/flows/${PID}`);
      t.same(flow.body.active, { PRODUCTION: '2', DEVELOPMENT: '2' });
      t.same(
        (flow.body.versions as Array<{ version: string }>).map((v) => v.version),
        ['1', '2'],
        'no new version: the same one',
      );

      const again = await run(['flow', 'promote', PID, '--from', 'DEVELOPMENT', '--to', 'PRODUCTION', '--json']);
      t.equal(again.code, 1);
      t.match(again.stderr, /ALREADY_PROMOTED: flow .* runs version 2 in DEVELOPMENT and PRODUCTION already/);

      t.equal((await run(['flow', 'publish', 'tool.yaml'])).code, 0);
      const none = await run(['flow', 'promote', 'Look up order', '--from', 'DEVELOPMENT', '--to', 'PRODUCTION']);
      t.equal(none.code, 1, 'by its name; development runs none');
      t.match(none.stderr, /PROCESS_NOT_PUBLISHED: flow .* has no active version in DEVELOPMENT/);
      const back = await run([
        'flow',
        'promote',
        'Look up order',
        '--from',
        'PRODUCTION',
        '--to',
        'DEVELOPMENT',
        '--json',
      ]);
      t.equal(back.code, 0, back.stderr);
      t.same(JSON.parse(back.stdout), {
        processId: LOOKUP_ID,
        from: 'PRODUCTION',
        to: 'DEVELOPMENT',
        version: '1',
        previous: null,
      });

      const same = await run(['flow', 'promote', PID, '--from', 'PRODUCTION', '--to', 'PRODUCTION']);
      t.equal(same.code, 2);
      t.match(same.stderr, /USAGE_ERROR: --from and --to are both PRODUCTION/);
      const missing = await run(['flow', 'promote', PID, '--to', 'PRODUCTION']);
      t.equal(missing.code, 2);
      t.match(missing.stderr, /--from/);

      // The daemon refuses whom it must, whatever a client shows.
      const viewer = (
        await callDaemon(url, key, 'POST', '/admin/api-keys', { name: 'v', role: 'viewer', organization: org })
      ).body.apiKey as string;
      const body = { from: 'PRODUCTION', to: 'DEVELOPMENT' };
      t.equal((await callDaemon(url, viewer, 'POST', `/admin/flows/${PID}/promote`, body)).body.error, 'FORBIDDEN');
      const other = (
        await callDaemon(url, system, 'POST', '/admin/api-keys', { name: 'o', role: 'admin', organization: 'globex' })
      ).body.apiKey as string;
      t.equal(
        (await callDaemon(url, other, 'POST', `/admin/flows/${PID}/promote`, body)).body.error,
        'PROCESS_NOT_FOUND',
      );
    },
  );

  await t.test(
    'two files with one processId: validate says so, publish refuses both and publishes the rest',
    async (t) => {
      const OTHER = GOOD.replace('0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11', '5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f');
      const { cwd, run, key } = await organization(t, {
        'a.yaml': GOOD,
        'b.yaml': GOOD.replace('Good', 'Copy'),
        'c.yaml': OTHER,
      });
      const validated = await wfxIn(['flow', 'validate', '--offline', 'a.yaml', 'b.yaml', 'c.yaml'], { cwd });
      t.equal(validated.code, 2);
      t.match(
        validated.stderr,
        /^a\.yaml:1:1: processId: processId 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 is also the processId of b\.yaml: each flow file needs a processId of its own .*\[DUPLICATE_PROCESS_ID\]$/m,
      );
      t.match(validated.stderr, /^b\.yaml:1:1: .*also the processId of a\.yaml.*\[DUPLICATE_PROCESS_ID\]$/m);
      t.equal(validated.stdout, 'c.yaml: ok\n');

      const published = await run(['flow', 'publish', 'a.yaml', 'b.yaml', 'c.yaml']);
      t.equal(published.code, 2, 'exit 2: files not published');
      t.match(published.stderr, /^a\.yaml:1:1: .*\[DUPLICATE_PROCESS_ID\]$/m);
      t.match(published.stderr, /^b\.yaml:1:1: .*\[DUPLICATE_PROCESS_ID\]$/m);
      t.match(published.stderr, /FLOW_INVALID: 2 of 3 files not published/);
      t.match(published.stdout, /^c\.yaml: Good version 1 active in PRODUCTION/m, 'the other file is published');
      const flows = await callDaemon(url, key, 'GET', '/admin/flows');
      t.same(
        (flows.body.items as Array<{ processId: string }>).map((f) => f.processId),
        ['5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f'],
        'neither of the two replaced the other',
      );
    },
  );
});
