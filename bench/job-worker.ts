/**
 * The worker process of the jobs benchmark (bench/jobs.ts): one `createWorker` of the package,
 * its handler answering at once, so what is measured is the jobs API and the engine. Reports
 * each completion's activate-to-complete time (ms) over IPC.
 */
import { createWorker } from '../src/worker/index.js';

const [url, apiKey, concurrency] = process.argv.slice(2);
const worker = createWorker({
  url: url!,
  apiKey: apiKey!,
  domain: 'bench',
  name: `bench-${process.pid}`,
  concurrency: Number(concurrency),
  handlers: { run: (input) => ({ n: input.n }) },
  onEvent: (e) => {
    if (e.type === 'completed') process.send!({ ms: e.ms });
  },
});
process.on('message', (m) => {
  if (m === 'stop') void worker.stop().then(() => process.exit(0));
});
process.send!({ ready: true });
