import { Counter, Histogram, Registry } from 'prom-client';
import t from 'tap';
import { HotCounter, HotHistogram } from '../../../src/daemon/observe/hot-series.js';

// The hot series must scrape as the text prom-client's own metrics give for the same
// observations: Prometheus, dashboards and the tests of GET /metrics read that text.

const BUCKETS = [0.001, 0.01, 0.1, 1];

t.test('a hot histogram scrapes as the text of prom-client’s, labels, +Inf, sum and count', async (t) => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({
    name: 'x_seconds',
    help: 'X',
    buckets: BUCKETS,
    labelNames: ['type', 'route'],
    registers: [theirs],
  });
  const hot = new HotHistogram('x_seconds', 'X', BUCKETS, ours);
  const observations: Array<[string, string, number]> = [
    ['task', '/a', 0],
    ['task', '/a', 0.001],
    ['task', '/a', 0.0011],
    ['end', '/b "quoted"\\n', 0.5],
    ['task', '/a', 7],
    ['end', '/b "quoted"\\n', 1],
  ];
  for (const [type, route, v] of observations) {
    reference.observe({ type, route }, v);
    hot.observe(
      hot.of(`${type}\0${route}`, () => ({ type, route })),
      v,
    );
  }
  t.equal(await ours.metrics(), await theirs.metrics());
});

t.test('a hot histogram without labels, and a hot counter, scrape as prom-client’s', async (t) => {
  const theirs = new Registry();
  const ours = new Registry();
  const refHistogram = new Histogram({ name: 'y_records', help: 'Y', buckets: [1, 2, 5], registers: [theirs] });
  const refCounter = new Counter({ name: 'z_total', help: 'Z', labelNames: ['flow'], registers: [theirs] });
  const hotHistogram = new HotHistogram('y_records', 'Y', [1, 2, 5], ours);
  const hotCounter = new HotCounter('z_total', 'Z', ours);
  const series = hotHistogram.of('', () => ({}));
  for (const v of [1, 3, 3, 9]) {
    refHistogram.observe(v);
    hotHistogram.observe(series, v);
  }
  for (const flow of ['a', 'b', 'a']) {
    refCounter.inc({ flow });
    hotCounter.of(flow, () => ({ flow })).value++;
  }
  t.equal(await ours.metrics(), await theirs.metrics());
  t.equal(hotCounter.of('a', () => ({ flow: 'never made' })).labels.flow, 'a', 'a series is made once, by its key');
});

t.test('a registry holds one metric of a name, hot or not', async (t) => {
  const registry = new Registry();
  new HotCounter('dup_total', 'D', registry);
  t.throws(() => new Counter({ name: 'dup_total', help: 'D', registers: [registry] }), /already been registered/);
});
