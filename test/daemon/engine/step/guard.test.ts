// What a node handler throws becomes its failure (the step's guard, step.ts), on a store: a
// timer whose handler throws only once it fires.
import t, { type Test } from 'tap';
import * as duration from '../../../../src/shared/duration.js';
import type * as EngineHelpers from '../../../helpers/engine.js';
import { STATE, STATUS, type Execution } from '../../../../src/daemon/state/state.js';

// What a handler throws while it runs: parseDuration stands in for any code a handler calls.
// It throws only for the duration `7s` once armed (after publishing: the validator parses it too).
// Absolute URLs: tap resolves relative ones from the source-mapped .ts file, not from dist/.
let thrown: unknown = null;
const at = (path: string): string => new URL(path, import.meta.url).href;
const { engineHarness } = await t.mockImport<typeof EngineHelpers>(at('../../../helpers/engine.js'), {
  [at('../../../../src/shared/duration.js')]: {
    ...duration,
    parseDuration: (text: string): number => {
      if (text === '7s' && thrown !== null) throw thrown;
      return duration.parseDuration(text);
    },
  },
});

/** A timer whose handler throws; with `errorCode`, an error boundary event that takes `errorCode`. */
const FLOW = (errorCode?: string) => `processId: AUTO
name: Guard
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 7s, next: done }
${errorCode === undefined ? '' : `  caught: { type: boundaryEvent, attachedTo: nap, event: error, errorCode: ${errorCode}, next: handled }\n  handled: { type: endEvent }\n`}  done: { type: endEvent }
`;

const nap = (inst: Execution) => Object.values(inst.nodes).find((n) => n.nodeId === 'nap')!;

async function run(t: Test, errorCode: string | undefined, err: unknown) {
  const h = await engineHarness(t);
  const pid = await h.publish(FLOW(errorCode));
  thrown = err;
  t.teardown(() => void (thrown = null));
  const inst = await h.start(pid);
  return { h, inst };
}

t.test(
  'a handler throwing an ENOENT-coded error fails its node with INTERNAL_ERROR, the code kept in the message',
  async (t) => {
    const { h, inst } = await run(
      t,
      undefined,
      Object.assign(new Error('no such file or directory'), { code: 'ENOENT' }),
    );
    t.equal(inst.stateCd, STATE.FAILED);
    t.equal(nap(inst).statusCd, STATUS.FAILED);
    t.same(inst.error, { code: 'INTERNAL_ERROR', message: 'ENOENT: no such file or directory', nodeId: 'nap' });
    t.ok(
      h.events.some(
        (e) => e.type === 'NODE_FAILED' && e.nodeId === 'nap' && e.processInstanceId === inst.processInstanceId,
      ),
      'NODE_FAILED',
    );
  },
);

t.test('an error boundary event catching INTERNAL_ERROR takes an ENOENT thrown by a handler', async (t) => {
  const { inst } = await run(
    t,
    'INTERNAL_ERROR',
    Object.assign(new Error('no such file or directory'), { code: 'ENOENT' }),
  );
  t.equal(inst.stateCd, STATE.COMPLETED, 'the boundary path completed the execution');
  t.equal(nap(inst).statusCd, STATUS.FAILED);
  t.match(inst.variables.error, { code: 'INTERNAL_ERROR', nodeId: 'nap' });
});

t.test('an error boundary event catching ENOENT sees nothing: the code never reaches a flow', async (t) => {
  const { inst } = await run(t, 'ENOENT', Object.assign(new Error('no such file or directory'), { code: 'ENOENT' }));
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'INTERNAL_ERROR' });
});

t.test('a thrown INVALID_DURATION (undocumented for flows) becomes INTERNAL_ERROR', async (t) => {
  let invalid: unknown;
  try {
    duration.parseDuration('soon');
  } catch (err) {
    invalid = err;
  }
  t.match(invalid, { code: 'INVALID_DURATION' });
  const { inst } = await run(t, undefined, invalid);
  t.match(inst.error, { code: 'INTERNAL_ERROR', message: /^INVALID_DURATION: / });
});

t.test('an error without a code (a TypeError) becomes INTERNAL_ERROR with its message', async (t) => {
  const { inst } = await run(t, undefined, new TypeError('x is not a function'));
  t.same(inst.error, { code: 'INTERNAL_ERROR', message: 'x is not a function', nodeId: 'nap' });
});

t.test('a thrown node failure code passes through unchanged', async (t) => {
  const { inst } = await run(t, 'INVALID_TIMER', Object.assign(new Error('not a time'), { code: 'INVALID_TIMER' }));
  t.equal(inst.stateCd, STATE.COMPLETED, 'the boundary event for INVALID_TIMER took it');
  t.match(inst.variables.error, { code: 'INVALID_TIMER', message: 'not a time', nodeId: 'nap' });
});
