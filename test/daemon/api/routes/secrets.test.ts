import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { createAiRunner } from '../../../../src/daemon/ai/runner.js';
import { envelopeKeyId } from '../../../../src/daemon/secrets/envelope.js';
import { storedSecrets } from '../../../../src/daemon/state/secret-fields.js';
import type { AiProvider } from '../../../../src/daemon/state/state.js';
import { apiHarness } from '../../../helpers/api.js';

const PROVIDER = { name: 'gpt', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' };

async function setup(t: Parameters<typeof apiHarness>[0]) {
  const ai = createAiRunner({});
  t.teardown(() => ai.close());
  const h = await apiHarness(t, { ai });
  const system = await h.key('admin', null);
  const admin = await h.key('admin', 'acme');
  const post = (url: string, payload: object) => h.call(admin, { method: 'POST', url, payload });
  t.equal((await post('/admin/ai-providers', { ...PROVIDER, apiKey: 'sk-one-1234567890' })).statusCode, 201);
  t.equal(
    (await post('/admin/ai-providers', { ...PROVIDER, name: 'two', apiKey: 'sk-two-1234567890' })).statusCode,
    201,
  );
  const connection = { name: 'inbox', host: '127.0.0.1', user: 'u', password: 'pw-1234567890', security: 'NONE' };
  t.equal((await post('/admin/email-connections', connection)).statusCode, 201);
  t.equal(
    (await post('/admin/webhooks', { name: 'hook', provider: 'GITHUB', secret: 'whsec-12345678' })).statusCode,
    201,
  );
  return { h, system, admin };
}

t.test('GET /admin/secrets: the keys and what each seals, to a system admin only; never a key', async (t) => {
  const { h, system, admin } = await setup(t);
  for (const [method, url] of [
    ['GET', '/admin/secrets'],
    ['POST', '/admin/secrets/rotate'],
  ] as const) {
    const res = await h.call(admin, { method, url, ...(method === 'POST' && { payload: {} }) });
    t.equal(res.json().error, 'FORBIDDEN', `${method} ${url}: an organization's admin`);
  }
  const res = await h.call(system, { method: 'GET', url: '/admin/secrets' });
  t.equal(res.statusCode, 200);
  const keyId = h.engine.secrets.sealingKeyId;
  t.same(res.json(), {
    keyId,
    where: 'an in-memory key',
    writable: true,
    keys: [{ keyId, held: true, secrets: 4 }],
    plain: 0,
  });
  t.equal(h.store.state.secretsKey, keyId, 'the first secret sealed made the key current in the state');
});

t.test('POST /admin/secrets/rotate: every secret sealed again with a new key, plain ones too', async (t) => {
  const { h, system } = await setup(t);
  const before = h.engine.secrets.sealingKeyId;
  // One as an earlier version stored it.
  const one = Object.values(h.store.state.aiProviders).find((p) => p.name === 'gpt')!;
  await h.store.commit({ type: 'aiProvider.saved', provider: { ...one, apiKey: 'sk-plain-1234567890' } });
  t.match((await h.call(system, { method: 'GET', url: '/admin/secrets' })).json(), { plain: 1 });

  const res = await h.call(system, { method: 'POST', url: '/admin/secrets/rotate', payload: {} });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json() as { keyId: string; keys: unknown[] };
  t.not(body.keyId, before);
  t.match(body, { added: true, resealed: 4, unreadable: 0, plain: 0 });
  t.same(body.keys, [
    { keyId: before, held: true, secrets: 0 },
    { keyId: body.keyId, held: true, secrets: 4 },
  ]);
  t.equal(h.store.state.secretsKey, body.keyId);
  t.same(
    storedSecrets(h.store.state).map((s) => envelopeKeyId(s.value)),
    [body.keyId, body.keyId, body.keyId, body.keyId],
  );
  t.notOk(h.store.state.secretsResealed, 'and checkpointed: the old forms are gone');
  const opened = storedSecrets(h.store.state).map((s) => h.engine.secrets.open(s.value, s.context));
  t.same(opened.sort(), ['pw-1234567890', 'sk-plain-1234567890', 'sk-two-1234567890', 'whsec-12345678']);

  const back = await h.call(system, { method: 'POST', url: '/admin/secrets/rotate', payload: { keyId: before } });
  t.match(back.json(), { keyId: before, added: false, resealed: 4 }, 'back to a key already held');
  const unknown = await h.call(system, {
    method: 'POST',
    url: '/admin/secrets/rotate',
    payload: { keyId: 'ffffffffffffffff' },
  });
  t.equal(unknown.statusCode, 500);
  t.match(unknown.json(), { error: 'SECRETS_KEY_MISSING', details: { keyId: 'ffffffffffffffff' } });
  t.equal(h.store.state.secretsKey, before, 'nothing changed');
  const bad = await h.call(system, { method: 'POST', url: '/admin/secrets/rotate', payload: { keyId: 'nope' } });
  t.equal(bad.json().error, 'VALIDATION_ERROR');
});

t.test('a sealed value moved to another record does not open there: the use fails with a code', async (t) => {
  const { h, admin } = await setup(t);
  const providers = Object.values(h.store.state.aiProviders) as AiProvider[];
  const [gpt, two] = [providers.find((p) => p.name === 'gpt')!, providers.find((p) => p.name === 'two')!];
  // Someone with write access to the data swaps the two keys' ciphertexts.
  await h.store.commit({ type: 'aiProvider.saved', provider: { ...gpt, apiKey: two.apiKey! } });
  const res = await h.call(admin, { method: 'POST', url: '/admin/ai-providers/gpt/test' });
  t.equal(res.statusCode, 502);
  t.match(res.json(), { error: 'AI_PROVIDER_TEST_FAILED', details: { code: 'AI_KEY_UNREADABLE' } });
  t.notMatch(res.body, /sk-two/);

  // A signing secret replaced by another record's ciphertext: deliveries are refused as they
  // arrive, saying why, and not journaled.
  const hook = Object.values(h.store.state.webhooks)[0]!;
  const endpoint = hook.endpoints[0]!;
  await h.store.commit({
    type: 'webhook.saved',
    webhook: { ...hook, endpoints: [{ ...endpoint, secrets: [{ secret: two.apiKey!, expiresAt: null }] }] },
  });
  const id = await h.webhooks.receive(endpoint.token, { 'x-hub-signature-256': 'sha256=00' }, Buffer.from('{}'));
  t.equal(h.store.state.pendingDeliveries[id!], undefined, 'never journaled');
  t.match(h.webhooks.unwrittenRefusals(hook.webhookId).at(-1), {
    deliveryId: id,
    signatureOk: false,
    refused: 'SIGNATURE',
    reason: /^signature refused: the signing secret cannot be opened \(SECRET_UNREADABLE: /,
  });

  // A reseal computed against a value changed since does nothing (the reducer compares).
  const stale = { type: 'secret.resealed', ref: { kind: 'aiProvider.apiKey', providerId: two.providerId } } as const;
  await h.store.commit({ ...stale, from: 'not-the-stored-value', to: 'x' });
  t.equal(h.store.state.aiProviders[two.providerId]!.apiKey, two.apiKey, 'left as it was');
});

t.test('a flow secret is sealed as it arrives and sealed again by a rotation, as the others are', async (t) => {
  const h = await apiHarness(t);
  const system = await h.key('admin', null);
  const admin = await h.key('admin', 'acme');
  const put = await h.call(admin, {
    method: 'PUT',
    url: '/admin/secrets/values/WAREHOUSE_TOKEN',
    payload: { value: 'tok-rotate-1234567890', environment: 'DEVELOPMENT' },
  });
  t.equal(put.statusCode, 200, put.body);
  t.notOk(put.body.includes('tok-rotate'), 'never answered');
  const sealed = () => storedSecrets(h.store.state).filter((s) => s.ref.kind === 'flowSecret.value');
  t.match(sealed(), [{ ref: { organization: 'acme', environment: 'DEVELOPMENT', name: 'WAREHOUSE_TOKEN' } }]);
  t.match(sealed()[0]!.value, /^wfxenc:v1:/);
  const before = h.engine.secrets.sealingKeyId;
  const rotated = (await h.call(system, { method: 'POST', url: '/admin/secrets/rotate', payload: {} })).json() as {
    keyId: string;
  };
  t.not(rotated.keyId, before);
  t.equal(envelopeKeyId(sealed()[0]!.value), rotated.keyId, 'sealed with the new key');
  t.equal(h.engine.secrets.open(sealed()[0]!.value, sealed()[0]!.context), 'tok-rotate-1234567890');
});
