/**
 * The worker thread of the flow check pool (check-pool.ts): carries out one request at a time,
 * as runFlowCheck does in the daemon's own thread, and answers with its id. A request that
 * throws (a bug) is answered with the error's text, never left without an answer.
 */
import { parentPort } from 'node:worker_threads';
import { runFlowCheck, type FlowCheckRequest, type FlowCheckResult } from './check.js';

/** What the pool sends. */
export interface CheckMessage {
  readonly id: number;
  readonly request: FlowCheckRequest;
}

/** What the worker answers: the result, or why the check broke. */
export type CheckAnswer =
  | { readonly id: number; readonly result: FlowCheckResult }
  | { readonly id: number; readonly error: string };

parentPort?.on('message', (msg: CheckMessage) => {
  let answer: CheckAnswer;
  try {
    answer = { id: msg.id, result: runFlowCheck(msg.request) };
  } catch (err) {
    answer = { id: msg.id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  parentPort!.postMessage(answer);
});
