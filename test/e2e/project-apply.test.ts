import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

/*
 * `wfx apply` end to end, through three commits of a git repository as a pipeline would deploy
 * them to a real daemon: the first creates everything, the second shows exactly what changed
 * as `~`, the third removes a flow and `--prune` deactivates it. An invalid flow or a secret
 * without a value refuses the whole apply with nothing changed; `wfx export` then `apply
 * --dry-run` shows only `=`; applying the same commit to DEVELOPMENT activates the versions
 * PRODUCTION runs rather than publishing new ones. No secret value is in any answer or file.
 */

const ORDER = 'a1b2c3d4-0000-4000-8000-000000000001';
const REFUND = 'a1b2c3d4-0000-4000-8000-000000000002';
const NIGHTLY = 'a1b2c3d4-0000-4000-8000-000000000003';

const orderFlow = (amountVar: string) => `processId: ${ORDER}
name: Order
triggers:
  - { type: webhook, webhook: github }
nodes:
  start: { type: startEvent, next: note }
  note: { type: setVariable, variables: { total: "\${${amountVar}}" }, next: call }
  call:
    type: serviceTask
    method: POST
    url: "{env.API_URL}/orders"
    headers: { Authorization: "Bearer {secret.TOKEN}" }
    next: done
  done: { type: endEvent }
`;
const REFUND_FLOW = `processId: ${REFUND}
name: Refund
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const NIGHTLY_FLOW = `processId: ${NIGHTLY}
name: Nightly
triggers:
  - { type: schedule, cron: "0 3 * * *" }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const config = (maxBodyBytes: number) => `webhooks:
  - { name: github, provider: GITHUB, secret: HOOK_SECRET, maxBodyBytes: ${maxBodyBytes} }
emailConnections:
  - { name: support, host: 127.0.0.1, port: 1, security: NONE, user: support, secret: IMAP_PASSWORD }
providers:
  - { name: gateway, kind: openai-compatible, baseUrl: "http://127.0.0.1:1/v1", model: small, secret: MODEL_KEY }
env:
  PRODUCTION: { API_URL: "http://127.0.0.1:1" }
  DEVELOPMENT: { API_URL: "http://127.0.0.1:2" }
secrets: [TOKEN]
schedules:
  Nightly: off
`;

t.test('apply deploys a repository commit by commit, all or nothing', async (t) => {
  const cwd = t.testdir({});
  const repo = join(cwd, 'repo');
  await mkdir(join(repo, 'flows'), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=ci', '-c', 'user.email=ci@example.invalid', ...args], { cwd: repo });
  git('init', '-q');
  const commit = async (files: Record<string, string | null>) => {
    for (const [file, text] of Object.entries(files))
      if (text === null) await rm(join(repo, file));
      else await writeFile(join(repo, file), text);
    git('add', '-A');
    git('commit', '-q', '-m', 'deploy');
    return git('rev-parse', 'HEAD').toString().trim();
  };
  const first = await commit({
    'flows/order.yaml': orderFlow('amount'),
    'flows/refund.yaml': REFUND_FLOW,
    'flows/nightly.yaml': NIGHTLY_FLOW,
    'wfx.yaml': config(1048576),
  });
  const second = await commit({ 'flows/order.yaml': orderFlow('total'), 'wfx.yaml': config(2097152) });
  const third = await commit({ 'flows/refund.yaml': null });

  const { url } = await startDaemon(t, { cwd });
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(url, key, method, path, body);
  const run = (args: string[], stdin?: string) => wfxIn(args, { cwd, ...(stdin !== undefined && { stdin }) });
  const values = {
    HOOK_SECRET: `hook-${randomBytes(12).toString('hex')}`,
    IMAP_PASSWORD: `imap-${randomBytes(12).toString('hex')}`,
    MODEL_KEY: `model-${randomBytes(12).toString('hex')}`,
    TOKEN: `token-${randomBytes(12).toString('hex')}`,
  };
  const flowsNow = async () => JSON.stringify((await api('GET', '/admin/flows')).body);

  // A secret without a value refuses the whole apply, nothing changed.
  git('checkout', '-q', first);
  const missing = await run(['apply', 'repo']);
  t.equal(missing.code, 2, missing.stderr);
  t.match(missing.stderr, /wfx\.yaml secret TOKEN: SECRET_NOT_FOUND: secret TOKEN has no value in PRODUCTION/);
  t.match(missing.stderr, /wfx\.yaml webhook github: SECRET_NOT_FOUND/);
  t.match(missing.stderr, /PROJECT_INVALID: the project has \d+ problems; nothing was changed/);
  t.same((await api('GET', '/admin/flows')).body, { items: [] }, 'no flow published');
  t.same((await api('GET', '/admin/webhooks')).body, { items: [] }, 'no webhook registered');
  for (const [name, value] of Object.entries(values))
    for (const env of ['PRODUCTION', 'DEVELOPMENT'])
      t.equal((await run(['secrets', 'set', name, '--stdin', '--env', env], value)).code, 0);

  // Commit 1: a dry run plans everything and changes nothing; the apply creates it all.
  const dry = await run(['apply', 'repo', '--dry-run']);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /^\+ flow a1b2c3d4-0000-4000-8000-000000000001 \(flows\/order\.yaml\)\n {4}version 1$/m);
  t.match(dry.stdout, /^\+ webhook github\n {4}provider GITHUB\n {4}signing secret from HOOK_SECRET$/m);
  t.match(
    dry.stdout,
    /^dry run for PRODUCTION in default: 7 to create, 1 to change, 0 to remove, 1 unchanged; nothing changed$/m,
  );
  t.same((await api('GET', '/admin/flows')).body, { items: [] }, 'a dry run changes nothing');
  const applied = await run(['apply', 'repo', '--json']);
  t.equal(applied.code, 0, applied.stderr);
  const plan = JSON.parse(applied.stdout) as {
    applied: boolean;
    changes: Array<{ kind: string; name: string; change: string }>;
  };
  t.equal(plan.applied, true);
  t.same(
    plan.changes.map((c) => `${c.change} ${c.kind} ${c.name}`),
    [
      'unchanged secret TOKEN',
      'create env API_URL',
      'create webhook github',
      'create emailConnection support',
      'create provider gateway',
      `create flow ${ORDER}`,
      `create flow ${REFUND}`,
      `create flow ${NIGHTLY}`,
      `update schedule ${NIGHTLY}`,
    ],
  );
  // The webhook signs with HOOK_SECRET's value: a delivery signed with it is what the daemon would accept.
  const payload = Buffer.from('{"action":"opened"}');
  const signed = await api('POST', '/admin/webhooks/github/sign', { body: payload.toString('base64') });
  const headers = Object.fromEntries(
    Object.entries(signed.body.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
  );
  t.equal(
    headers['x-hub-signature-256'],
    `sha256=${createHmac('sha256', values.HOOK_SECRET).update(payload).digest('hex')}`,
  );
  const triggers = (await api('GET', '/admin/triggers')).body.items as Array<{
    type: string;
    processId: string;
    state: string;
  }>;
  t.equal(triggers.find((x) => x.type === 'schedule' && x.processId === NIGHTLY)?.state, 'disabled', 'schedules: off');
  const again = await run(['apply', 'repo']);
  t.equal(again.code, 0, again.stderr);
  t.notMatch(again.stdout, /^[+~-] /m, 'the same commit again: only = lines');
  t.match(again.stdout, /0 created, 0 changed, 0 removed, 9 unchanged/);

  // Commit 2: one flow and one webhook changed, shown as exactly those `~`.
  git('checkout', '-q', second);
  const changed = await run(['apply', 'repo']);
  t.equal(changed.code, 0, changed.stderr);
  t.same(changed.stdout.match(/^[+~-] .*$/gm), [`~ webhook github`, `~ flow ${ORDER} (flows/order.yaml)`]);
  t.match(changed.stdout, /^ {4}maxBodyBytes 1048576 -> 2097152$/m);
  t.match(changed.stdout, /^ {4}version 1 -> 2\n {4}nodes changed: note$/m);
  const flows = (await api('GET', '/admin/flows')).body.items as Array<{
    processId: string;
    active: Record<string, string>;
  }>;
  t.equal(flows.find((f) => f.processId === ORDER)?.active.PRODUCTION, '2');
  t.equal(flows.find((f) => f.processId === REFUND)?.active.PRODUCTION, '1', 'an unchanged flow keeps its version');

  // An invalid flow refuses the whole apply: the new variable beside it is not set either.
  await writeFile(
    join(repo, 'flows', 'broken.yaml'),
    'processId: x\nnodes:\n  start: { type: startEvent, next: nowhere }\n',
  );
  await writeFile(
    join(repo, 'wfx.yaml'),
    config(2097152).replace('API_URL: "http://127.0.0.1:1"', 'API_URL: "http://127.0.0.1:9"'),
  );
  const before = await flowsNow();
  const invalid = await run(['apply', 'repo']);
  t.equal(invalid.code, 2);
  t.match(invalid.stderr, /^flows\/broken\.yaml:\d+:\d+: /m);
  t.equal(await flowsNow(), before, 'no flow changed');
  t.same((await api('GET', '/admin/environments/PRODUCTION/variables')).body.variables, {
    API_URL: 'http://127.0.0.1:1',
  });
  await rm(join(repo, 'flows', 'broken.yaml'));
  git('checkout', '-q', '--', 'wfx.yaml');

  // Commit 3: the removed flow stays without --prune, and is deactivated with it.
  git('checkout', '-q', third);
  const kept = await run(['apply', 'repo', '--dry-run']);
  t.notMatch(kept.stdout, new RegExp(REFUND), 'without --prune, what the project lacks is left alone');
  const pruned = await run(['apply', 'repo', '--prune']);
  t.equal(pruned.code, 0, pruned.stderr);
  t.same(pruned.stdout.match(/^[+~-] .*$/gm), [`- flow ${REFUND}`]);
  const refund = ((await api('GET', '/admin/flows')).body.items as Array<{ processId: string; active: object }>).find(
    (f) => f.processId === REFUND,
  );
  t.same(refund?.active, {}, 'deactivated in PRODUCTION; its versions are kept');

  // The same commit to DEVELOPMENT activates the versions PRODUCTION runs.
  const dev = await run(['apply', 'repo', '--env', 'DEVELOPMENT']);
  t.equal(dev.code, 0, dev.stderr);
  t.match(
    dev.stdout,
    new RegExp(`^~ flow ${ORDER} \\(flows/order\\.yaml\\)\\n {4}version - -> 2 \\(published before`, 'm'),
  );
  const order = (
    (await api('GET', '/admin/flows')).body.items as Array<{ processId: string; active: object; versions: unknown[] }>
  ).find((f) => f.processId === ORDER);
  t.same(order?.active, { DEVELOPMENT: '2', PRODUCTION: '2' });
  t.equal(order?.versions.length, 2, 'no new version');

  // A pipeline's secret, set by the deploy from its environment: the flows' next calls use it.
  const fromEnv = await wfxIn(['apply', 'repo', '--from-env'], { cwd, env: { TOKEN: `${values.TOKEN}-rotated` } });
  t.equal(fromEnv.code, 0, fromEnv.stderr);
  t.same(fromEnv.stdout.match(/^[+~-] .*$/gm), ['~ secret TOKEN']);
  t.match(fromEnv.stdout, /^ {4}value changed by the deploy$/m);
  t.notMatch(fromEnv.stdout, new RegExp(values.TOKEN));

  // Export, then a dry run of it against the same daemon: only `=` lines.
  const exported = await run(['export', 'out']);
  t.equal(exported.code, 0, exported.stderr);
  t.same((await readdir(join(cwd, 'out', 'flows'))).sort(), [`${ORDER}.yaml`, `${NIGHTLY}.yaml`]);
  const round = await run(['apply', 'out', '--dry-run']);
  t.equal(round.code, 0, round.stderr);
  t.notMatch(round.stdout, /^[+~-] /m, round.stdout);
  t.match(round.stdout, /0 to create, 0 to change, 0 to remove/);
  const again2 = await run(['export', 'out']);
  t.equal(again2.code, 2, 'export does not write over files unless --force');
  t.match(again2.stderr, /FILE_EXISTS/);

  // No secret value in anything the CLI printed or wrote.
  const texts = [missing, dry, applied, again, changed, invalid, pruned, dev, exported, round].flatMap((r) => [
    r.stdout,
    r.stderr,
  ]);
  texts.push(await readFile(join(cwd, 'out', 'wfx.yaml'), 'utf8'));
  texts.push(JSON.stringify((await api('GET', '/admin/project')).body));
  for (const value of Object.values(values))
    t.notOk(
      texts.some((x) => x.includes(value)),
      `no ${value.split('-')[0]} value`,
    );
});

t.test('apply refuses what it cannot carry out, naming where', async (t) => {
  const cwd = t.testdir({
    repo: {
      'wfx.yaml': 'webhooks:\n  - { name: hooks, provider: NOPE }\n',
      'one.yaml': REFUND_FLOW,
      'two.yaml': REFUND_FLOW.replace('name: Refund', 'name: Refund again'),
    },
  });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  const schema = await run(['apply', 'repo']);
  t.equal(schema.code, 2);
  t.match(
    schema.stderr,
    /^VALIDATION_ERROR: wfx\.yaml:2:\d+: webhooks\.0\.provider must be equal to one of the allowed values/m,
  );
  await writeFile(join(cwd, 'repo', 'wfx.yaml'), 'schedules: { Refund: on }\n');
  const twice = await run(['apply', 'repo']);
  t.equal(twice.code, 2);
  t.match(twice.stderr, /^two\.yaml: DUPLICATE_PROCESS_ID: two\.yaml and one\.yaml both declare processId/m);
  t.match(twice.stderr, /schedule Refund: NO_SCHEDULE: flow Refund \(version 1\) has no schedule trigger/);
  await writeFile(join(cwd, 'repo', 'wfx.yaml'), 'webhooks: [\n');
  const syntax = await run(['apply', 'repo']);
  t.equal(syntax.code, 2);
  t.match(syntax.stderr, /^PROJECT_INVALID: wfx\.yaml:\d+:\d+: /m);
});

t.test('an apply is one journal entry: a SIGKILL before it leaves none of it, after it all of it', async (t) => {
  const flow = (v: string) => orderFlow(v).replace('{secret.TOKEN}', 'none').replace('github', 'open');
  const cwd = t.testdir({
    repo: {
      'wfx.yaml':
        'env:\n  PRODUCTION: { A: "1", B: "2" }\nwebhooks:\n  - { name: open, provider: STANDARD, authType: NONE }\n',
      flows: { 'order.yaml': flow('amount') },
    },
  });
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const out = join(cwd, '.wfx', 'logs', 'daemon.out');
  /**
   * Starts a daemon on the data dir, one that stops at `point` when an apply reaches it (none:
   * a plain one), and reads what it recovered: the restart after a crash is the daemon the next
   * crash is made in.
   */
  const restart = async (point?: string) => {
    // The log of an earlier daemon names the point already: each crash starts a new one.
    await rm(out, { force: true });
    const daemon = await startDaemon(t, { cwd, ...(point !== undefined && { env: { WFX_TEST_CRASH_POINT: point } }) });
    const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
    const held = (await callDaemon(daemon.url, key, 'GET', '/admin/project')).body as {
      flows: Array<{ version: string }>;
      config: { env: { PRODUCTION?: Record<string, string> }; webhooks: Array<{ name: string }> };
    };
    return { pid: daemon.pid, held };
  };
  /** Applies the project to daemon `pid`, which stops at `point`, and kills it there. */
  const crashAt = async (pid: number, point: string) => {
    const sent = wfxIn(['apply', 'repo'], { cwd });
    await eventually(`the daemon stops at ${point}`, async () =>
      (await readFile(out, 'utf8').catch(() => '')).includes(`crash-point ${point}\n`),
    );
    process.kill(pid, 'SIGKILL');
    t.not((await sent).code, 0, 'the apply was not acknowledged');
    await eventually('the daemon is gone', () => !alive(pid));
  };

  await crashAt((await restart('project:planned')).pid, 'project:planned');
  const { pid: second, held: none } = await restart('project:committed');
  t.same([none.flows, none.config.env, none.config.webhooks], [[], {}, []], 'killed before its commit: none of it');
  await crashAt(second, 'project:committed');
  const { pid: third, held: all } = await restart('project:planned');
  t.match(all, {
    flows: [{ processId: ORDER, version: '1' }],
    config: { env: { PRODUCTION: { A: '1', B: '2' } }, webhooks: [{ name: 'open' }] },
  });
  t.equal(all.flows.length, 1, 'killed after its commit, before the answer: all of it');

  // A second commit cut off before its commit: the first stays whole, nothing of the second.
  await writeFile(join(cwd, 'repo', 'wfx.yaml'), 'env:\n  PRODUCTION: { A: "3", B: "4" }\n');
  await writeFile(join(cwd, 'repo', 'flows', 'order.yaml'), flow('total'));
  await crashAt(third, 'project:planned');
  const { held: kept } = await restart();
  t.same([kept.flows[0]?.version, kept.config.env.PRODUCTION], ['1', { A: '1', B: '2' }]);
});
