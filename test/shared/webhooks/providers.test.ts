import { createHmac } from 'node:crypto';
import t from 'tap';
import {
  eventFields,
  normalizePayload,
  signDelivery,
  verifyDelivery,
  type Scheme,
} from '../../../src/shared/webhooks/providers.js';

const AT = new Date('2026-11-21T10:00:00Z');
const TS = String(AT.getTime() / 1000);

t.test('GitHub: the documented example signature verifies', async (t) => {
  // docs.github.com, "Validating webhook deliveries": secret and payload, and the expected header.
  const gh: Scheme = { provider: 'GITHUB', authType: 'HMAC' };
  const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
  t.same(verifyDelivery(gh, ["It's a Secret to Everybody"], headers, Buffer.from('Hello, World!'), AT), {
    ok: true,
    timestamp: null,
  });
  t.match(verifyDelivery(gh, ['another secret'], headers, Buffer.from('Hello, World!'), AT), {
    ok: false,
    reason: /no signature matches/,
  });
  t.match(
    verifyDelivery(gh, ["It's a Secret to Everybody"], headers, Buffer.from('Hello, World?'), AT),
    { ok: false },
    'a tampered body',
  );
  t.match(verifyDelivery(gh, ['s'], {}, Buffer.from('x'), AT), {
    ok: false,
    reason: /X-Hub-Signature-256 header is missing/,
  });
  t.same(
    verifyDelivery(gh, ['old', "It's a Secret to Everybody"], headers, Buffer.from('Hello, World!'), AT).ok,
    true,
    'any of several secrets (rotation)',
  );
});

t.test('Standard Webhooks: the reference test vector verifies, and the tolerance holds', async (t) => {
  // The standard-webhooks reference libraries' test vector.
  const sw: Scheme = { provider: 'STANDARD', authType: 'HMAC' };
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const headers = {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,bogus v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };
  const body = Buffer.from('{"test": 2432232314}');
  t.same(
    verifyDelivery(sw, [secret], headers, body, new Date(1614265330_000)),
    { ok: true, timestamp: '2021-02-25T15:02:10.000Z' },
    'one of several signatures matches',
  );
  t.match(
    verifyDelivery(sw, [secret], headers, body, new Date((1614265330 + 301) * 1000)),
    { ok: false, reason: /301 s away from now/ },
    'stale: more than 5 minutes',
  );
  t.equal(
    verifyDelivery(sw, [secret], headers, body, new Date((1614265330 - 299) * 1000)).ok,
    true,
    'within 5 minutes before',
  );
  t.match(verifyDelivery(sw, [secret], { ...headers, 'webhook-id': undefined }, body, AT), {
    ok: false,
    reason: /webhook-id header is missing/,
  });
});

t.test('Stripe: t=,v1= over "t.body", several v1, tolerance', async (t) => {
  const st: Scheme = { provider: 'STRIPE', authType: 'HMAC' };
  const secret = 'whsec_test_secret';
  const body = Buffer.from('{"id":"evt_1","type":"payment_intent.succeeded"}');
  const v1 = createHmac('sha256', secret).update(`${TS}.${body.toString()}`).digest('hex');
  t.same(verifyDelivery(st, [secret], { 'stripe-signature': `t=${TS},v1=deadbeef,v1=${v1}` }, body, AT).ok, true);
  t.same(signDelivery(st, secret, body, AT), { 'Stripe-Signature': `t=${TS},v1=${v1}` }, 'sign and verify agree');
  t.match(verifyDelivery(st, [secret], { 'stripe-signature': `t=${Number(TS) - 600},v1=${v1}` }, body, AT), {
    ok: false,
    reason: /tolerance/,
  });
  t.match(verifyDelivery(st, [secret], { 'stripe-signature': `t=${TS}` }, body, AT), { ok: false, reason: /no v1/ });
  t.same(eventFields(st, {}, JSON.parse(body.toString())), { eventType: 'payment_intent.succeeded', eventId: 'evt_1' });
});

t.test('Slack: v0 over "v0:ts:body", form bodies, event fields', async (t) => {
  const sl: Scheme = { provider: 'SLACK', authType: 'HMAC' };
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = Buffer.from(
    'token=xyz&team_id=T1&command=%2Fdeploy&text=prod&trigger_id=13345224609.738474920.8088930838d88f008e0',
  );
  const headers = signDelivery(sl, secret, body, AT);
  t.equal(headers['X-Slack-Request-Timestamp'], TS);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  t.same(verifyDelivery(sl, [secret], lower, body, AT).ok, true);
  const payload = normalizePayload(body, 'application/x-www-form-urlencoded');
  t.match(payload, { command: '/deploy', text: 'prod' });
  t.same(eventFields(sl, lower, payload), {
    eventType: '/deploy',
    eventId: '13345224609.738474920.8088930838d88f008e0',
  });
  t.same(eventFields(sl, {}, { type: 'event_callback', event_id: 'Ev1', event: { type: 'app_mention' } }), {
    eventType: 'app_mention',
    eventId: 'Ev1',
  });
});

t.test('GitHub form deliveries (payload=<json>) are normalized to the JSON', async (t) => {
  const json = { action: 'opened', number: 7 };
  const body = Buffer.from(`payload=${encodeURIComponent(JSON.stringify(json))}`);
  t.same(normalizePayload(body, 'application/x-www-form-urlencoded; charset=utf-8'), json);
  t.same(normalizePayload(Buffer.from('not json'), 'text/plain'), 'not json');
});

t.test("CUSTOM: the registration's header, algorithm, encoding, prefix and event fields", async (t) => {
  const custom: Scheme = {
    provider: 'CUSTOM',
    authType: 'HMAC',
    custom: {
      signatureHeader: 'x-acme-signature',
      algorithm: 'sha512',
      encoding: 'base64',
      prefix: 'sig=',
      eventTypePath: 'meta.kind',
      eventIdHeader: 'x-acme-id',
    },
  };
  const body = Buffer.from('{"meta":{"kind":"order.paid"}}');
  const sig = createHmac('sha512', 'k3y-k3y-k3y').update(body).digest('base64');
  const headers = { 'x-acme-signature': `sig=${sig}`, 'x-acme-id': 'a-1' };
  t.same(verifyDelivery(custom, ['k3y-k3y-k3y'], headers, body, AT).ok, true);
  t.match(verifyDelivery(custom, ['k3y-k3y-k3y'], { 'x-acme-signature': sig }, body, AT), {
    ok: false,
    reason: /does not start with sig=/,
  });
  t.same(eventFields(custom, headers, JSON.parse(body.toString())), { eventType: 'order.paid', eventId: 'a-1' });
  t.same(verifyDelivery({ provider: 'CUSTOM', authType: 'NONE' }, [], {}, body, AT).ok, true, 'authType NONE');
});

t.test('every provider refuses a valid signature with anything after, before or inside it', async (t) => {
  const body = Buffer.from('{"id":"evt_1","type":"ping"}');
  const custom = (encoding: 'hex' | 'base64'): Scheme => ({
    provider: 'CUSTOM',
    authType: 'HMAC',
    custom: { signatureHeader: 'x-sig', algorithm: 'sha256', encoding, prefix: 'sha256=' },
  });
  /** Each scheme, its signature header, and spellings of a valid signature that must be refused. */
  const cases: Array<{ name: string; scheme: Scheme; header: string; secret: string; bad: (sig: string) => string[] }> =
    [
      {
        name: 'GITHUB',
        scheme: { provider: 'GITHUB', authType: 'HMAC' },
        header: 'X-Hub-Signature-256',
        secret: 'gh-secret',
        bad: (sig) => [
          `${sig}00`,
          `${sig}zz`,
          `${sig} x`,
          sig.toUpperCase().replace('SHA256=', 'sha256='),
          `${sig.slice(0, 20)} ${sig.slice(20)}`,
        ],
      },
      {
        name: 'STRIPE',
        scheme: { provider: 'STRIPE', authType: 'HMAC' },
        header: 'Stripe-Signature',
        secret: 'whsec_stripe',
        bad: (sig) => [
          `${sig}zz`,
          `${sig}00`,
          sig.replace(/v1=([0-9a-f]+)/, (_, h: string) => `v1=${h.toUpperCase()}`),
          sig.replace('v1=', 'v1= '),
          `${sig},garbage`,
          `${sig.split(',')[0]},${sig.split(',')[0]},${sig.split(',')[1]}`,
        ],
      },
      {
        name: 'SLACK',
        scheme: { provider: 'SLACK', authType: 'HMAC' },
        header: 'X-Slack-Signature',
        secret: 'slack-secret',
        bad: (sig) => [`${sig}zz`, `${sig}0`, `v0=${sig.slice(3).toUpperCase()}`, `${sig}\t`],
      },
      {
        name: 'STANDARD',
        scheme: { provider: 'STANDARD', authType: 'HMAC' },
        header: 'webhook-signature',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        bad: (sig) => [
          `${sig}AAAA`,
          `${sig}!`,
          sig.replace(/=$/, ''),
          sig.replace('v1,', 'v1, '),
          `${sig.slice(0, 12)}\t${sig.slice(12)}`,
        ],
      },
      {
        name: 'CUSTOM hex',
        scheme: custom('hex'),
        header: 'x-sig',
        secret: 'custom-secret',
        bad: (sig) => [`${sig}zz`, `${sig}00`, sig.replace(/[a-f]/, (c) => c.toUpperCase()), ` ${sig}x`],
      },
      {
        name: 'CUSTOM base64',
        scheme: custom('base64'),
        header: 'x-sig',
        secret: 'custom-secret',
        bad: (sig) => [`${sig}AAAA`, `${sig}%`, sig.replace(/=$/, ''), `${sig.slice(0, 15)} ${sig.slice(15)}`],
      },
    ];
  for (const c of cases) {
    const signed = Object.fromEntries(
      Object.entries(signDelivery(c.scheme, c.secret, body, AT, { eventId: 'msg_1' })).map(([k, v]) => [
        k.toLowerCase(),
        v,
      ]),
    );
    const key = c.header.toLowerCase();
    t.same(verifyDelivery(c.scheme, [c.secret], signed, body, AT).ok, true, `${c.name}: the exact signature verifies`);
    for (const spelled of c.bad(signed[key]!)) {
      t.not(spelled, signed[key]);
      t.match(
        verifyDelivery(c.scheme, [c.secret], { ...signed, [key]: spelled }, body, AT),
        { ok: false },
        `${c.name}: ${JSON.stringify(spelled)} is refused`,
      );
    }
  }
});

t.test(
  'CUSTOM hex may be written in upper case throughout; Standard Webhooks skips a non-canonical v1 for a valid one',
  async (t) => {
    const body = Buffer.from('{"a":1}');
    const scheme: Scheme = {
      provider: 'CUSTOM',
      authType: 'HMAC',
      custom: { signatureHeader: 'x-sig', algorithm: 'sha512', encoding: 'hex' },
    };
    const sig = createHmac('sha512', 'k').update(body).digest('hex');
    t.same(verifyDelivery(scheme, ['k'], { 'x-sig': sig.toUpperCase() }, body, AT).ok, true, 'upper case throughout');
    t.same(
      verifyDelivery(scheme, ['k'], { 'x-sig': sig.slice(0, 64) }, body, AT).ok,
      false,
      'a sha256-long prefix of it',
    );

    const sw: Scheme = { provider: 'STANDARD', authType: 'HMAC' };
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const good = signDelivery(sw, secret, body, AT, { eventId: 'msg_2' });
    const valid = good['webhook-signature']!;
    const headers = { 'webhook-id': good['webhook-id']!, 'webhook-timestamp': good['webhook-timestamp']! };
    t.same(
      verifyDelivery(sw, [secret], { ...headers, 'webhook-signature': `v1,${valid.slice(3, -1)} ${valid}` }, body, AT)
        .ok,
      true,
      'one exact v1 among others',
    );
    t.match(
      verifyDelivery(sw, [secret], { ...headers, 'webhook-signature': `v1,${valid.slice(3, -1)} ${valid}x` }, body, AT),
      { ok: false, reason: /canonical base64/ },
      'none exact: refused, and the reason says why',
    );
  },
);
