import t from 'tap';
import { formatMs, parseRetryAfter, retryDelayMs, sleep } from '../../../src/daemon/outbound/retry.js';

t.test('retryDelayMs: exponential, capped by maxIntervalMs and 10 minutes; Retry-After wins', async (t) => {
  const policy = { maxAttempts: 5, initialIntervalMs: 100, backoff: 2 };
  t.same(
    [1, 2, 3].map((n) => retryDelayMs(policy, n)),
    [100, 200, 400],
  );
  t.equal(retryDelayMs({ ...policy, maxIntervalMs: 150 }, 3), 150);
  t.equal(retryDelayMs({ ...policy, backoff: 1e9 }, 40), 600_000);
  t.equal(retryDelayMs(policy, 3, 7.4), 7);
});

t.test('parseRetryAfter: seconds or an HTTP date, at least 0, at most 10 minutes', async (t) => {
  const now = Date.parse('2026-11-24T10:00:00Z');
  t.equal(parseRetryAfter('2', now), 2000);
  t.equal(parseRetryAfter(' 0 ', now), 0);
  t.equal(parseRetryAfter('Tue, 24 Nov 2026 10:00:05 GMT', now), 5000);
  t.equal(parseRetryAfter('Tue, 24 Nov 2026 09:00:00 GMT', now), 0);
  t.equal(parseRetryAfter('99999', now), 600_000);
  t.equal(parseRetryAfter('soon', now), undefined);
  t.equal(parseRetryAfter(null, now), undefined);
});

t.test('formatMs and sleep', async (t) => {
  t.equal(formatMs(250), '250ms');
  t.equal(formatMs(1500), '1.5s');
  t.equal(await sleep(0, undefined), true);
  const c = new AbortController();
  const waiting = sleep(600_000, c.signal);
  c.abort();
  t.equal(await waiting, false);
});
