import t from 'tap';
import pg from 'pg';
import { decisionOf, RateLimiter, SharedRateLimiter } from '../../../../src/daemon/api/rate-limit.js';
import { migrate } from '../../../../src/daemon/store/pg/migrations.js';
import { PgRateLimits } from '../../../../src/daemon/store/pg/pg-rate-limits.js';
import { POSTGRES_SKIP, startPostgres } from '../../../helpers/postgres.js';

// Rate limits counted in the database (decision 042): the daemons sharing it count one key's
// requests together, with the sliding windows a single daemon counts in memory.

const MINUTE = { limit: 3, windowMs: 60_000 };
const HOUR = { limit: 5, windowMs: 3_600_000 };

t.test('counted in PostgreSQL', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const pool = new pg.Pool({ connectionString: await server.createDatabase('rates'), max: 8 });
  t.teardown(() => pool.end());
  const client = await pool.connect();
  await migrate(client);
  client.release();
  const limits = new PgRateLimits(pool);

  const counts = [];
  for (let i = 0; i < 4; i++) counts.push(await limits.hit('k1', [MINUTE, HOUR]));
  t.same(
    counts.map((c) => [c.allowed, c.used]),
    [
      [true, [0, 0]],
      [true, [1, 1]],
      [true, [2, 2]],
      [false, [3, 3]],
    ],
    'three a minute, the fourth refused, and not recorded',
  );
  const refused = counts[3]!;
  t.ok(refused.freesInMs[0]! > 50_000 && refused.freesInMs[0]! <= 60_000, 'the oldest leaves the minute within it');
  t.match(decisionOf([MINUTE, HOUR], refused), { allowed: false, limit: 3, remaining: 0 });
  t.ok(decisionOf([MINUTE, HOUR], refused).retryAfterSeconds >= 50, 'retry once the oldest leaves the minute');
  t.match((await limits.hit('k2', [MINUTE])).allowed, true, 'each key counts apart');
  t.equal((await limits.hit('k3', [{ limit: 0, windowMs: 60_000 }])).allowed, false, 'a limit of 0 refuses all');

  // Daemons counting together: of 30 requests at once, exactly the limit's are allowed.
  const burst = await Promise.all(
    Array.from({ length: 30 }, () => limits.hit('k4', [{ limit: 10, windowMs: 60_000 }])),
  );
  t.equal(burst.filter((c) => c.allowed).length, 10, "one key's requests are counted one at a time");
  const rows = await pool.query<{ n: string }>("SELECT count(*) AS n FROM wfx_rate_hits WHERE key_id = 'k4'");
  t.equal(Number(rows.rows[0]!.n), 10, 'only the allowed ones are recorded');
});

t.test('decisions and headers from a count, as the memory limiter makes them', async (t) => {
  t.same(
    decisionOf([MINUTE, HOUR], { allowed: true, used: [0, 3], freesInMs: [0, 1_800_000] }),
    { allowed: true, limit: 5, remaining: 1, resetSeconds: 1800, retryAfterSeconds: 0 },
    'the window with the fewest left is reported; it frees a slot when its oldest leaves',
  );
  t.same(
    decisionOf([MINUTE], { allowed: true, used: [0], freesInMs: [0] }),
    { allowed: true, limit: 3, remaining: 2, resetSeconds: 60, retryAfterSeconds: 0 },
    'the first request of a window is its oldest',
  );
  t.same(
    decisionOf([MINUTE, HOUR], { allowed: false, used: [3, 5], freesInMs: [20_500, 900_000] }),
    { allowed: false, limit: 3, remaining: 0, resetSeconds: 900, retryAfterSeconds: 900 },
    'refused by both: retry when both have room',
  );
});

t.test('while the database cannot be reached, each daemon counts alone', async (t) => {
  const warnings: string[] = [];
  let down = true;
  const database = {
    hit: async () => {
      if (down) throw new Error('connection refused');
      return { allowed: true, used: [0], freesInMs: [0] };
    },
  };
  const limiter = new SharedRateLimiter(database, new RateLimiter(() => 0), (line) => warnings.push(line));
  const limits = { perMinute: 2, perHour: null };
  const decisions = [];
  for (let i = 0; i < 3; i++) decisions.push(await limiter.hit('k', limits));
  t.same(
    decisions.map((d) => d?.allowed),
    [true, true, false],
    'counted in memory, up to the limit',
  );
  t.equal(warnings.length, 1, 'said once');
  t.match(warnings[0], /counted by this daemon alone/);
  down = false;
  t.match(await limiter.hit('k', limits), { allowed: true, remaining: 1 }, 'counted in the database again');
  t.equal(warnings.length, 2);
  t.match(warnings[1], /in the database again/);
  t.equal(await limiter.hit('k', { perMinute: null, perHour: null }), null, 'a key without limits is not counted');
});
