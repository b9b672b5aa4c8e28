import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { wfxIn } from '../helpers/cli.js';
import { fakeAiRunner } from '../helpers/fake-ai.js';
import { served } from '../helpers/served.js';
import { providerKeyContext } from '../../src/daemon/state/secret-fields.js';

const SECRET = 'sk-cli-test-5f2b9c1d7e3a4b6c8d0e2f4a6b8c0d2e';

t.test('create with --api-key-stdin; list, get, update, test, delete; the key never printed', async (t) => {
  const { h, wfx, url } = await served(t, { ai: fakeAiRunner() });
  const outputs: string[] = [];
  const run = async (args: string[], stdin?: string) => {
    const res = await wfx(args, stdin);
    outputs.push(res.stdout, res.stderr);
    return res;
  };
  const created = await run(
    [
      'ai',
      'providers',
      'create',
      'openai',
      '--kind',
      'openai-compatible',
      '--base-url',
      'https://api.openai.com/v1',
      '--model',
      'gpt-4o-mini',
      '--api-key-stdin',
      '--default',
    ],
    `${SECRET}\n`,
  );
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /provider openai added \(openai-compatible, model gpt-4o-mini, default\)/);
  const stored = Object.values(h.store.state.aiProviders)[0]!;
  t.equal(
    h.engine.secrets.open(stored.apiKey!, providerKeyContext(stored)),
    SECRET,
    'the key from stdin, its newline cut',
  );

  const list = await run(['ai', 'providers', 'list']);
  t.equal(list.code, 0);
  t.match(list.stdout, /NAME\s+KIND\s+MODEL\s+DEFAULT\s+KEY\s+WHERE\n/);
  t.match(list.stdout, /openai\s+openai-compatible\s+gpt-4o-mini\s+yes\s+set\s+https:\/\/api\.openai\.com\/v1/);
  const system = await h.key('admin', null);
  const other = await h.key('admin', 'other');
  await h.call(other, {
    method: 'POST',
    url: '/admin/ai-providers',
    payload: { name: 'theirs', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
  });
  const all = await wfxIn(['--url', url, '--api-key', system.apiKey, 'ai', 'providers', 'list']);
  t.match(all.stdout, /^ORGANIZATION\s+NAME\s+KIND/, 'a system key sees whose each is');
  t.match(all.stdout, /^acme\s+openai\s/m);
  t.match(all.stdout, /^other\s+theirs\s/m);
  const acmeOnly = await wfxIn(['--url', url, '--api-key', system.apiKey, 'ai', 'providers', 'list', '--org', 'acme']);
  t.notMatch(acmeOnly.stdout, /theirs/);
  const json = await run(['ai', 'providers', 'list', '--json']);
  t.match(JSON.parse(json.stdout), [{ name: 'openai', hasApiKey: true }]);

  const got = await run(['ai', 'providers', 'get', 'openai']);
  t.match(got.stdout, /^name\s+openai$/m);
  t.match(got.stdout, /^API key\s+set$/m);
  t.match(got.stdout, /^default\s+yes$/m);

  const updated = await run(['ai', 'providers', 'update', 'openai', '--model', 'gpt-4.1-mini', '--remove-api-key']);
  t.equal(updated.code, 0, updated.stderr);
  t.match(JSON.parse((await run(['ai', 'providers', 'get', 'openai', '--json'])).stdout), {
    model: 'gpt-4.1-mini',
    hasApiKey: false,
  });

  const tested = await run(['ai', 'providers', 'test', 'openai']);
  t.equal(tested.code, 0, tested.stderr);
  t.match(tested.stdout, /^model fake-1: answered in \d+ ms, 7 input \+ 1 output tokens\nanswer: "ready"\n$/);
  t.match(JSON.parse((await run(['ai', 'providers', 'test', 'openai', '--json'])).stdout), {
    model: 'fake-1',
    latencyMs: Number,
    usage: { inputTokens: 7, outputTokens: 1 },
    text: 'ready',
  });

  const deleted = await run(['ai', 'providers', 'delete', 'openai']);
  t.match(deleted.stdout, /provider openai deleted/);
  const gone = await run(['ai', 'providers', 'get', 'openai']);
  t.equal(gone.code, 1);
  t.match(gone.stderr, /^NOT_FOUND: /);
  t.notMatch(outputs.join('\n'), SECRET.slice(0, 12), 'the key is never printed');
});

t.test('a local provider: a relative model path is resolved where the command runs', async (t) => {
  const { wfx, cwd } = await served(t, { ai: fakeAiRunner(), organization: null }); // a host file: a system key's to register
  writeFileSync(join(cwd, 'tiny.gguf'), Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(28)]));
  const res = await wfx([
    'ai',
    'providers',
    'create',
    'tiny',
    '--kind',
    'local',
    '--model-path',
    'tiny.gguf',
    '--threads',
    '2',
    '--json',
  ]);
  t.equal(res.code, 0, res.stderr);
  t.match(JSON.parse(res.stdout), { kind: 'local', modelPath: join(cwd, 'tiny.gguf'), model: 'tiny', threads: 2 });
  const list = await wfx(['ai', 'providers', 'list']);
  t.match(
    list.stdout,
    new RegExp(`tiny\\s+local\\s+tiny\\s+${join(cwd, 'tiny.gguf').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
  );
});

t.test('errors: code and message on stderr, exit codes; no stack', async (t) => {
  const ai = fakeAiRunner(() => ({ ok: false, code: 'AI_AUTH', message: `the provider refused the key ${SECRET}` }));
  const { wfx } = await served(t, { ai });
  const noKey = await wfx([
    'ai',
    'providers',
    'create',
    'x',
    '--kind',
    'openai-compatible',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--model',
    'm',
    '--api-key-stdin',
  ]);
  t.equal(noKey.code, 2, 'no key on stdin: a usage error');
  t.match(noKey.stderr, /^USAGE_ERROR: no API key on standard input/);
  const wrongKind = await wfx(['ai', 'providers', 'create', 'x', '--kind', 'local', '--base-url', 'http://h/v1']);
  t.equal(wrongKind.code, 2);
  t.match(wrongKind.stderr, /^VALIDATION_ERROR: baseUrl is for openai-compatible providers/);
  const badKind = await wfx(['ai', 'providers', 'create', 'x', '--kind', 'anthropic']);
  t.equal(badKind.code, 2, 'commander refuses a kind it does not know');
  const badThreads = await wfx(['ai', 'providers', 'create', 'x', '--kind', 'local', '--threads', '0']);
  t.equal(badThreads.code, 2);

  t.equal(
    (
      await wfx(
        [
          'ai',
          'providers',
          'create',
          'p',
          '--kind',
          'openai-compatible',
          '--base-url',
          'http://127.0.0.1:9/v1',
          '--model',
          'm',
          '--api-key-stdin',
        ],
        SECRET,
      )
    ).code,
    0,
  );
  const failed = await wfx(['ai', 'providers', 'test', 'p']);
  t.equal(failed.code, 1);
  t.match(failed.stderr, /^AI_PROVIDER_TEST_FAILED: AI_AUTH: the provider refused the key \[redacted\]\nhint: /);
  t.notMatch(failed.stderr, /at .*\.js:\d+/, 'no stack');
  const nothing = await wfx(['ai', 'providers', 'update', 'p']);
  t.equal(nothing.code, 2);
  t.match(nothing.stderr, /^USAGE_ERROR: name something to change/);
  const both = await wfx(['ai', 'providers', 'update', 'p', '--api-key-stdin', '--remove-api-key'], 'k');
  t.equal(both.code, 2);
});
