/**
 * `wfx/worker`: a job worker for other Node programs (package.json "exports"). Create one with
 * a handler per action of a domain; it pulls jobs from the daemon until stopped.
 *
 * ```js
 * import { createWorker, JobError } from 'wfx/worker';
 * const worker = createWorker({
 *   url: 'http://127.0.0.1:7878', apiKey: process.env.WFX_API_KEY, domain: 'billing',
 *   handlers: { charge: async (input) => ({ receipt: await pay(input.amount) }) },
 * });
 * process.once('SIGTERM', () => worker.stop());
 * ```
 */
export { createWorker, JobError } from './worker.js';
export type { JobContext, JobHandler, Worker, WorkerEvent, WorkerOptions } from './worker.js';
export { commandHandler } from './command.js';
export { loadHandlers } from './module.js';
