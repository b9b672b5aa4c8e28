import { readFile } from 'node:fs/promises';
import t from 'tap';
import { DaemonMetrics } from '../../src/daemon/observe/metrics.js';
import { initialState } from '../../src/daemon/state/state.js';

/** The wfx_ series each expression names (a histogram's _bucket, _sum and _count are its own name's). */
function seriesNamed(expr: string): string[] {
  return [...expr.matchAll(/\bwfx_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
}

t.test('every expr of the Grafana dashboard names a series the daemon exposes', async (t) => {
  const board = JSON.parse(await readFile(new URL('../../../docs/grafana/wfx.json', import.meta.url), 'utf8')) as {
    panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  };
  const exposed = new Set((await new DaemonMetrics(initialState()).registry.getMetricsAsJSON()).map((m) => m.name));
  let exprs = 0;
  for (const panel of board.panels)
    for (const { expr } of panel.targets) {
      exprs++;
      const names = seriesNamed(expr);
      t.ok(names.length > 0, `${panel.title}: names a series`);
      for (const name of names) t.ok(exposed.has(name), `${panel.title}: ${name} is exposed`);
    }
  t.ok(exprs >= 20, 'the dashboard covers the series');
  const shown = new Set(board.panels.flatMap((p) => p.targets.flatMap((x) => seriesNamed(x.expr))));
  for (const name of exposed) t.ok(shown.has(name), `${name} has a panel`);
});
