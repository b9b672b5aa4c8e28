/**
 * `npm run bench`: every benchmark in turn, each writing its figures to docs/performance.md.
 */
import { formatAiBench, runAiBench } from './ai.js';
import { formatEngineBench, runEngineBench } from './engine.js';
import { formatFaultsBench, runFaultsBench } from './faults.js';
import { formatHttpBench, runHttpBench } from './http.js';
import { formatJobsBench, runJobsBench } from './jobs.js';
import { formatPostgresBench, runPostgresBench } from './postgres.js';
import { formatPublishBench, runPublishBench } from './publish.js';
import { machineLine, writeSection } from './report.js';
import { formatStoreBench, runStoreBench } from './store.js';

console.log(machineLine({ commit: true }));
console.log('\n## Store\n');
const store = formatStoreBench(await runStoreBench());
console.log(store);
await writeSection('store', `${machineLine()}\n\n${store}`);
console.log('\n## Engine\n');
const engine = formatEngineBench(await runEngineBench());
console.log(engine);
await writeSection('engine', `${machineLine()}\n\n${engine}`);
console.log('\n## aiTask\n');
const ai = formatAiBench(await runAiBench());
console.log(ai);
await writeSection('ai', `${machineLine()}\n\n${ai}`);
console.log('\n## Jobs\n');
const jobs = formatJobsBench(await runJobsBench());
console.log(jobs);
await writeSection('jobs', `${machineLine()}\n\n${jobs}`);
console.log('\n## PostgreSQL store\n');
const postgres = formatPostgresBench(await runPostgresBench());
console.log(postgres);
await writeSection('postgres', `${machineLine()}\n\n${postgres}`);
console.log('\n## HTTP\n');
const http = formatHttpBench(await runHttpBench());
console.log(http);
await writeSection('http', `${machineLine()}\n\n${http}`);
console.log('\n## Publishing big flows\n');
const publish = formatPublishBench(await runPublishBench());
console.log(publish);
await writeSection('publish', `${machineLine()}\n\n${publish}`);
console.log('\n## Ordinary traffic under attack\n');
const faults = formatFaultsBench(await runFaultsBench());
console.log(faults);
await writeSection('faults', `${machineLine()}\n\n${faults}`);
console.log('\nwritten to docs/performance.md');
