import t from 'tap';
import {
  filtersFromQuery,
  filtersToQuery,
  fromLocalInput,
  hasFilters,
  matchesFilters,
  toLocalInput,
} from '../../src/console/model/filters.js';
import type { InstanceSummary } from '../../src/shared/api/process.js';

const ALL = {
  processId: 'order-flow',
  version: '3',
  environment: 'DEVELOPMENT',
  state: 'FAILED',
  errorCode: 'HTTP_503',
  correlationKey: 'order 42/a&b',
  where: 'orderId=A-1002&x=y',
  startedAfter: '2026-01-01T00:00:00.000Z',
  startedBefore: '2026-02-01T00:00:00.000Z',
} as const;

t.test('filters -> URL -> filters gives the same filters, every one of them', async (t) => {
  const query = filtersToQuery(ALL);
  t.match(
    query,
    /^\?processId=order-flow&version=3&environment=DEVELOPMENT&state=FAILED&errorCode=HTTP_503&/,
    'in a fixed order',
  );
  t.same(filtersFromQuery(new URLSearchParams(query.slice(1))), ALL, 'round trip, special characters included');
  t.same(filtersToQuery(filtersFromQuery(new URLSearchParams(query.slice(1)))), query, 'and back again');
  for (const key of Object.keys(ALL) as (keyof typeof ALL)[]) {
    const one = { [key]: ALL[key] };
    t.same(filtersFromQuery(new URLSearchParams(filtersToQuery(one).slice(1))), one, `${key} alone`);
  }
  t.equal(filtersToQuery({}), '', 'no filters: no query');
  t.notOk(hasFilters({}));
  t.ok(hasFilters({ state: 'RUNNING' }));
});

t.test('values a URL may hold that no filter takes are left out', async (t) => {
  const f = filtersFromQuery(
    new URLSearchParams(
      'version=latest&environment=STAGING&state=done&startedAfter=yesterday&processId=&other=1&correlationKey=%20k%20&where=no%20pair',
    ),
  );
  t.same(f, { correlationKey: 'k' }, 'only the valid, trimmed value');
  t.same(filtersFromQuery({ state: 'RUNNING', version: undefined }), { state: 'RUNNING' }, 'a record of values too');
  t.equal(
    filtersToQuery({ state: 'RUNNING' }, { limit: '50', cursor: 'c' }),
    '?state=RUNNING&limit=50&cursor=c',
    'with the page',
  );
});

t.test('a datetime-local value and an ISO date-time turn into each other', async (t) => {
  const local = '2026-03-04T05:06';
  const iso = fromLocalInput(local)!;
  t.match(iso, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
  t.equal(toLocalInput(iso), local, 'round trip in the zone of the browser');
  t.equal(fromLocalInput(''), undefined);
  t.equal(toLocalInput(undefined), '');
  t.equal(toLocalInput('not a date'), '');
});

t.test('an execution matches the filters field by field; a child never belongs at the top', async (t) => {
  const e: InstanceSummary = {
    processInstanceId: 'x',
    processId: 'order-flow',
    processName: 'Orders',
    processVersion: '3',
    stateCd: 2,
    state: 'FAILED',
    startTime: '2026-01-15T00:00:00.000Z',
    endTime: '2026-01-15T00:00:01.000Z',
    correlationKey: 'order 42/a&b',
    parentInstanceId: null,
    childCount: 0,
    waitingNodeIds: [],
    environment: 'DEVELOPMENT',
    errorCode: 'HTTP_503',
    search: { orderId: 'A-1002&x=y' },
  };
  t.ok(matchesFilters(e, ALL), 'all of them');
  t.notOk(matchesFilters(e, { where: 'orderId=A-1003' }), 'another search value');
  t.notOk(matchesFilters(e, { where: 'customer=A-1002&x=y' }), 'another search attribute');
  t.notOk(matchesFilters({ ...e, search: undefined } as InstanceSummary, { where: 'orderId=A-1002&x=y' }), 'none');
  t.ok(matchesFilters(e, {}), 'none');
  t.notOk(matchesFilters(e, { state: 'RUNNING' }));
  t.notOk(matchesFilters(e, { version: '2' }));
  t.notOk(matchesFilters(e, { environment: 'PRODUCTION' }));
  t.notOk(matchesFilters(e, { errorCode: 'HTTP_500' }));
  t.notOk(matchesFilters(e, { correlationKey: 'order 43' }));
  t.notOk(matchesFilters(e, { startedAfter: '2026-01-16T00:00:00.000Z' }));
  t.notOk(matchesFilters(e, { startedBefore: '2026-01-15T00:00:00.000Z' }), 'before is exclusive');
  t.notOk(matchesFilters({ ...e, parentInstanceId: 'p' }, {}), 'a child');
});
