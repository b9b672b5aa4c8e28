/**
 * `npm run bench`: every benchmark in turn, each writing its figures to docs/performance.md.
 * The HTTP benchmarks (issue 8) join here.
 */
import { formatEngineBench, runEngineBench } from './engine.js';
import { machineLine, writeSection } from './report.js';
import { formatStoreBench, runStoreBench } from './store.js';

console.log(machineLine());
console.log('\n## Store\n');
const store = formatStoreBench(await runStoreBench());
console.log(store);
await writeSection('store', `${machineLine()}\n\n${store}`);
console.log('\n## Engine\n');
const engine = formatEngineBench(await runEngineBench());
console.log(engine);
await writeSection('engine', `${machineLine()}\n\n${engine}`);
console.log('\nwritten to docs/performance.md');
