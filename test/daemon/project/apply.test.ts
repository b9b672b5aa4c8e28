import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { apiHarness, type TestKey } from '../../helpers/api.js';

/*
 * POST /admin/project/apply's plan for what wfx.yaml declares beside the flows: credentials
 * named as secrets and sealed again when their value changes, entries changed in place (a
 * webhook keeps its URLs), prune refusing to delete what a flow triggers on, an organization
 * admin kept to its own organization. The whole deploy of a repository is test/e2e/project-apply.
 */

const HOOKED = `processId: 6b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6
name: Hooked
triggers: [{ type: webhook, webhook: hooks }]
nodes:
  s: { type: startEvent, next: e }
  e: { type: endEvent }
`;

type Change = { kind: string; name: string; change: string; details: string[] };

async function setup(t: Test) {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'acme');
  const apply = (key: TestKey, body: object) =>
    h.call(key, { method: 'POST', url: '/admin/project/apply', payload: { flows: [], ...body } });
  const secret = (name: string, value: string) =>
    h.call(admin, { method: 'PUT', url: `/admin/secrets/values/${name}`, payload: { value } });
  return { h, admin, apply, secret };
}

const lines = (body: { changes: Change[] }) => body.changes.map((c) => `${c.change} ${c.kind} ${c.name}`);

t.test('a credential is sealed from the secret it names: again when it names another', async (t) => {
  const { h, admin, apply, secret } = await setup(t);
  const config = {
    webhooks: [{ name: 'hooks', provider: 'STANDARD', secret: 'HOOK' }],
    emailConnections: [{ name: 'mail', host: '127.0.0.1', port: 1, security: 'NONE', user: 'u', secret: 'IMAP' }],
    providers: [
      { name: 'llm', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', secret: 'KEY' },
    ],
  };
  await secret('HOOK', 'whsec_first-value-1234');
  await secret('IMAP', 'imap-first');
  await secret('KEY', 'key-first');
  const first = await apply(admin, { config, flows: [{ file: 'hooked.yaml', source: HOOKED }] });
  t.equal(first.statusCode, 200, first.body);
  const urls = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/hooks' })).json<{
    endpoints: Array<{ url: string }>;
  }>();
  t.same(lines(first.json()), [
    'create webhook hooks',
    'create emailConnection mail',
    'create provider llm',
    'create flow 6b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
  ]);
  t.same(
    lines((await apply(admin, { config })).json()).filter((l) => !l.startsWith('unchanged')),
    [],
    'same values: unchanged',
  );

  await secret('HOOK2', 'whsec_second-value-5678');
  await secret('IMAP2', 'imap-second');
  await secret('KEY2', 'key-second');
  const renamed = JSON.parse(
    JSON.stringify(config).replace(/"(HOOK|IMAP|KEY)"/g, (_m, n: string) => `"${n}2"`),
  ) as typeof config;
  const rotated = (await apply(admin, { config: renamed })).json<{ changes: Change[] }>();
  t.same(
    rotated.changes.map((c) => [c.name, c.details]),
    [
      ['hooks', ['signing secret from HOOK2 (the previous one works for 24h)']],
      ['mail', ['password from IMAP2']],
      ['llm', ['apiKey from KEY2']],
    ],
  );
  const after = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/hooks' })).json<{
    endpoints: Array<{ url: string; secrets: number }>;
  }>();
  t.same(
    after.endpoints.map((e) => e.url),
    urls.endpoints.map((e) => e.url),
    'the endpoint URLs are kept',
  );
  t.equal(after.endpoints[0]!.secrets, 2, 'the previous signing secret still works');
  const sign = (
    await h.call(admin, {
      method: 'POST',
      url: '/admin/webhooks/hooks/sign',
      payload: { body: Buffer.from('{}').toString('base64') },
    })
  ).json<{ headers: Record<string, string> }>();
  t.ok(Object.keys(sign.headers).length > 0, 'signed with the new value');
  t.notMatch(JSON.stringify(rotated), /second|first/, 'no value in the plan');
});

t.test('prune deletes what nothing names, and refuses to delete what a flow triggers on', async (t) => {
  const { admin, apply, secret } = await setup(t);
  await secret('HOOK', 'whsec_value-12345678');
  const hooks = { name: 'hooks', provider: 'STANDARD', secret: 'HOOK' };
  const spare = { name: 'spare', provider: 'STANDARD', authType: 'NONE' };
  t.equal(
    (await apply(admin, { config: { webhooks: [hooks, spare] }, flows: [{ file: 'h.yaml', source: HOOKED }] }))
      .statusCode,
    200,
  );
  const inUse = await apply(admin, {
    config: { webhooks: [spare] },
    prune: true,
    flows: [{ file: 'h.yaml', source: HOOKED }],
  });
  t.equal(inUse.statusCode, 400);
  t.match(inUse.json(), {
    error: 'PROJECT_INVALID',
    details: { problems: [{ kind: 'webhook', name: 'hooks', code: 'IN_USE' }] },
  });
  const pruned = await apply(admin, {
    config: { webhooks: [hooks] },
    prune: true,
    flows: [{ file: 'h.yaml', source: HOOKED }],
  });
  t.equal(pruned.statusCode, 200, pruned.body);
  t.same(
    lines(pruned.json()).filter((l) => !l.startsWith('unchanged')),
    ['remove webhook spare'],
  );
  const flowGone = await apply(admin, { config: { webhooks: [] }, prune: true });
  t.equal(flowGone.statusCode, 200, 'the flow deactivated in the same apply no longer names it');
  t.same(lines(flowGone.json()), ['remove webhook hooks', 'remove flow 6b1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6']);
});

t.test('a flow may trigger on a webhook the same apply creates; a refusal changes nothing', async (t) => {
  const { h, admin, apply } = await setup(t);
  const spare = { name: 'hooks', provider: 'STANDARD', authType: 'NONE' };
  const unknown = await apply(admin, { config: {}, flows: [{ file: 'h.yaml', source: HOOKED }] });
  t.match(unknown.json(), { details: { problems: [{ file: 'h.yaml', code: 'UNKNOWN_WEBHOOK', line: 3 }] } });
  const together = await apply(admin, {
    config: { webhooks: [spare], env: { PRODUCTION: { A: '1' } } },
    flows: [{ file: 'h.yaml', source: HOOKED }],
  });
  t.equal(together.statusCode, 200, together.body);
  const broken = await apply(admin, {
    config: { env: { PRODUCTION: { A: '2' } }, secrets: ['NOT_SET'] },
    flows: [{ file: 'h.yaml', source: HOOKED }],
  });
  t.match(broken.json(), {
    error: 'PROJECT_INVALID',
    details: { problems: [{ kind: 'secret', name: 'NOT_SET', code: 'SECRET_NOT_FOUND' }] },
  });
  const vars = (await h.call(admin, { method: 'GET', url: '/admin/environments/PRODUCTION/variables' })).json<{
    variables: object;
  }>();
  t.same(vars.variables, { A: '1' }, 'the refused apply set nothing');
});

t.test('an organization admin deploys into its own organization only', async (t) => {
  const { h, apply } = await setup(t);
  const other = await h.key('admin', 'other');
  const viewer = await h.key('viewer', 'acme');
  t.equal((await apply(viewer, { config: {}, dryRun: true })).statusCode, 403);
  const cross = await apply(other, { config: {}, organization: 'acme' });
  t.equal(cross.statusCode, 403);
  t.equal((await h.call(other, { method: 'GET', url: '/admin/project?organization=acme' })).statusCode, 403);
  const exported = (await h.call(other, { method: 'GET', url: '/admin/project' })).json<{
    organization: string;
    flows: unknown[];
  }>();
  t.same([exported.organization, exported.flows], ['other', []]);
});

t.test('a deploy sets the secrets it is given, in the same change', async (t) => {
  const { h, admin, apply } = await setup(t);
  const config = { secrets: ['TOKEN'], webhooks: [{ name: 'hooks', provider: 'STANDARD', secret: 'HOOK' }] };
  const given = (values: Record<string, string>) => apply(admin, { config, secretValues: values });
  const first = await given({ TOKEN: 'token-one', HOOK: 'whsec_hook-one-1234' });
  t.equal(first.statusCode, 200, first.body);
  t.same(lines(first.json()), ['create secret HOOK', 'create secret TOKEN', 'create webhook hooks']);
  t.same(
    lines((await given({ TOKEN: 'token-one', HOOK: 'whsec_hook-one-1234' })).json()),
    ['unchanged secret HOOK', 'unchanged secret TOKEN', 'unchanged webhook hooks'],
    'the same values again: nothing to do',
  );
  const changed = await given({ TOKEN: 'token-two' });
  t.same(lines(changed.json()), ['update secret TOKEN', 'unchanged webhook hooks']);
  t.notMatch(changed.body, /token-|hook-one/, 'no value in the answer');
  const stray = await given({ OTHER: 'x' });
  t.match(stray.json(), { details: { problems: [{ name: 'OTHER', code: 'SECRET_NOT_NAMED' }] } });
  const list = (await h.call(admin, { method: 'GET', url: '/admin/secrets/values' })).json<{
    items: Array<{ name: string }>;
  }>();
  t.same(
    list.items.map((i) => i.name),
    ['HOOK', 'TOKEN'],
    'the refused deploy set nothing',
  );
});

t.test('setting a secret again seals it into the entries a deploy made from it', async (t) => {
  const { h, admin, apply, secret } = await setup(t);
  const config = {
    webhooks: [{ name: 'hooks', provider: 'STANDARD', secret: 'HOOK' }],
    providers: [
      { name: 'llm', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', secret: 'KEY' },
    ],
  };
  await secret('HOOK', 'whsec_first-value-1234');
  await secret('KEY', 'key-first');
  t.equal((await apply(admin, { config })).statusCode, 200);
  await secret('HOOK', 'whsec_second-value-5678');
  await secret('KEY', 'key-second');
  const hooks = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/hooks' })).json<{
    endpoints: Array<{ secrets: number }>;
  }>();
  t.equal(hooks.endpoints[0]!.secrets, 2, 'rotated: the previous signing secret works a while longer');
  t.same(
    lines((await apply(admin, { config, dryRun: true })).json()),
    ['unchanged webhook hooks', 'unchanged provider llm'],
    'the entries hold the new values already',
  );
  await secret('OTHER', 'unrelated');
  const again = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/hooks' })).json<{
    endpoints: Array<{ secrets: number }>;
  }>();
  t.equal(again.endpoints[0]!.secrets, 2, 'another secret leaves them alone');
});

t.test("a local model names a file on the daemon's host: a system key deploys it, an admin keeps it", async (t) => {
  const { h, admin, apply } = await setup(t);
  const system = await h.key('admin', null);
  const modelPath = join(t.testdir({}), 'tiny.gguf');
  await writeFile(modelPath, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
  const config = { providers: [{ name: 'local', kind: 'local', modelPath }] };
  const refused = await apply(admin, { config });
  t.match(refused.json(), { details: { problems: [{ kind: 'provider', name: 'local', code: 'FORBIDDEN' }] } });
  const made = await apply(system, { config, organization: 'acme' });
  t.equal(made.statusCode, 200, made.body);
  t.same(
    lines((await apply(admin, { config })).json()),
    ['unchanged provider local'],
    'kept as it is: no system key needed',
  );
  const moved = await apply(admin, {
    config: { providers: [{ ...config.providers[0], modelPath: `${modelPath}.2` }] },
  });
  t.match(moved.json(), { details: { problems: [{ code: 'FORBIDDEN' }] } }, 'another file: refused again');
});
