import { Socket } from 'node:net';
import t from 'tap';
import { callHttp } from '../../../src/daemon/engine/work/http.js';
import { parseCidr } from '../../../src/daemon/outbound/cidr.js';
import { NetworkPolicy, type Resolver } from '../../../src/daemon/outbound/network-policy.js';
import { isWfxError } from '../../../src/shared/errors.js';

const call = (url: string) => ({
  method: 'GET',
  url,
  timeoutMs: 2000,
  retry: { maxAttempts: 3, initialIntervalMs: 1, backoff: 1 },
});

/** Records every socket connect of the test body; refuses (throws) any to a host that is not loopback. */
async function watchingConnects<T>(body: () => Promise<T>): Promise<{ result: T; hosts: string[] }> {
  const hosts: string[] = [];
  const original = Socket.prototype.connect;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    const opts = args[0] as { host?: string } | unknown[];
    const host = Array.isArray(opts) ? (opts[0] as { host?: string }).host : (opts as { host?: string }).host;
    hosts.push(String(host));
    if (host !== undefined && !/^(127\.|::1$|localhost$|metadata\.test$)/.test(host))
      throw new Error(`the test tried to connect to ${host}`);
    return (original as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof original;
  try {
    return { result: await body(), hosts };
  } finally {
    Socket.prototype.connect = original;
  }
}

t.test('check: the built-in rules', async (t) => {
  const policy = new NetworkPolicy();
  policy.listening('127.0.0.1', 7878);
  for (const a of [
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
  ]) {
    t.match(policy.check(a, 80), /link-local or cloud metadata/, `${a}: refused`);
  }
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '0.1.2.3', '::', '::ffff:127.0.0.1', '::ffff:7f00:1']) {
    t.match(policy.check(a, 7878), /own listener/, `${a} on the daemon's port: refused`);
    t.equal(policy.check(a, 8080), null, `${a} on another port: allowed`);
  }
  for (const a of [
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.10',
    'fc00::1',
    'fd12:3456::1',
    '93.184.216.34',
    '2606:4700::1',
  ]) {
    t.equal(policy.check(a, 7878), null, `${a}: private and public ranges allowed`);
  }
});

t.test('check: deny wins, allow lifts the built-in rules; a malformed rule is a USAGE_ERROR', async (t) => {
  const policy = new NetworkPolicy({
    deny: ['10.0.0.0/8', '127.0.0.0/8', '192.168.1.7'],
    allow: ['169.254.169.254', '127.0.0.1/32', '10.9.0.0/16'],
  });
  policy.listening('0.0.0.0', 7878);
  t.match(policy.check('10.1.2.3', 80), /10\.0\.0\.0\/8/, 'denied, the rule named');
  t.match(policy.check('10.9.0.1', 80), /denied/, 'deny wins over allow');
  t.match(policy.check('0.0.0.0', 80), /127\.0\.0\.0\/8/, '0.0.0.0 is judged as loopback too');
  t.match(policy.check('192.168.1.7', 80), /192\.168\.1\.7\/32/, 'a single address');
  t.equal(policy.check('192.168.1.8', 80), null);
  t.equal(policy.check('169.254.169.254', 80), null, 'allowed: the metadata address');
  t.match(policy.check('169.254.169.253', 80), /link-local/, 'only that one');
  const own = new NetworkPolicy({ allow: ['127.0.0.1'] });
  own.listening('127.0.0.1', 7878);
  t.equal(own.check('127.0.0.1', 7878), null, 'allowed: the own listener at that address');
  t.match(own.check('127.0.0.2', 7878), /own listener/, 'not at another');
  for (const bad of ['', 'nope', '10.0.0.0/33', '10.0.0/8', 'fe80::/129', '1.2.3.4/x']) {
    t.ok(
      isWfxError(
        (() => {
          try {
            parseCidr(bad);
          } catch (e) {
            return e;
          }
        })(),
        'USAGE_ERROR',
      ),
      `${JSON.stringify(bad)}: USAGE_ERROR`,
    );
  }
  t.throws(() => new NetworkPolicy({ deny: ['bogus'] }), { code: 'USAGE_ERROR' });
});

t.test('the metadata address is refused before any connection, by IP and by a name that resolves to it', async (t) => {
  const resolved: string[] = [];
  const resolve: Resolver = (hostname, _options, callback) => {
    resolved.push(hostname);
    callback(null, [{ address: '169.254.169.254', family: 4 }]);
  };
  const policy = new NetworkPolicy({ resolve });
  const { result: byIp, hosts: ipHosts } = await watchingConnects(() =>
    callHttp(call('http://169.254.169.254/latest/meta-data/'), { network: policy }),
  );
  t.match(byIp, { ok: false, code: 'HTTP_FORBIDDEN_ADDRESS' });
  t.match(
    (byIp as { message: string }).message,
    /169\.254\.169\.254:80.*169\.254\.0\.0\/16/,
    'the message names the address and the rule',
  );
  t.same(ipHosts, [], 'no socket was connected');
  const { result: byName, hosts: nameHosts } = await watchingConnects(() =>
    callHttp(call('http://metadata.test/latest/meta-data/'), { network: policy }),
  );
  t.match(byName, { ok: false, code: 'HTTP_FORBIDDEN_ADDRESS' }, 'a name resolving to it: refused');
  t.same(resolved, ['metadata.test'], 'checked on what the name resolved to, once: not retried');
  t.ok(
    nameHosts.every((h) => !h.startsWith('169.254.')),
    'no connection to 169.254.x',
  );
  await policy.close();
});

t.test('connections wait for the listener when asked to', async (t) => {
  const policy = new NetworkPolicy({ awaitListener: true });
  const pending = callHttp(call('http://127.0.0.1:65000/'), { network: policy });
  policy.listening('127.0.0.1', 65000);
  t.match(await pending, { ok: false, code: 'HTTP_FORBIDDEN_ADDRESS' }, 'judged with the listener known');
  await policy.close();
});
