/**
 * `npm run bench`: every benchmark in turn, each writing its figures to docs/performance.md.
 * Later issues add the engine and HTTP benchmarks here.
 */
import { formatStoreBench, runStoreBench } from './store.js';
import { machineLine, writeSection } from './report.js';

console.log(machineLine());
console.log('\n## Store\n');
const store = formatStoreBench(await runStoreBench());
console.log(store);
await writeSection('store', `${machineLine()}\n\n${store}`);
console.log('\nwritten to docs/performance.md');
