import t from 'tap';
import { WfxError } from '../../../src/shared/errors.js';
import type { Effects } from '../../../src/daemon/engine/effects.js';
import { resumeTaken, type Recovering } from '../../../src/daemon/engine/recovery.js';
import type { Executions } from '../../../src/daemon/state/executions.js';
import type { Execution, WfxState } from '../../../src/daemon/state/state.js';
import { eventually } from '../../helpers/eventually.js';

// Executions a partition taken while running brought in, cold (decision 077): those finished
// are archived, those with work under way run on. One that cannot be read back yet is tried
// again later, not left for a restart; one that moved away meanwhile is its new holder's.

/** Cold executions `ids` and a read-back that fails as `failures` says, in turn; what the resume did. */
function fixture(ids: readonly string[], failures: Array<Error | null>) {
  const instances: Record<string, Execution> = {};
  const cold = new Set(ids);
  const reads: string[][] = [];
  const executions = {
    ensure: (wanted: readonly string[]) => {
      reads.push([...wanted]);
      const failure = failures.shift() ?? null;
      if (failure !== null && !(failure instanceof WfxError)) return Promise.reject(failure);
      // A move: the first one stays out, the others come in.
      const moving = failure === null ? null : wanted[0];
      for (const id of wanted)
        if (id !== moving && cold.delete(id)) instances[id] = { processInstanceId: id } as Execution;
      if (moving !== null) cold.delete(moving!);
      return failure === null ? Promise.resolve() : Promise.reject(failure);
    },
    get: (id: string) => instances[id],
    coldSummary: (id: string) => (cold.has(id) ? {} : undefined),
  } as unknown as Executions;
  const archived: string[] = [];
  const effects = { recovered: (inst: Execution) => archived.push(inst.processInstanceId) } as unknown as Effects;
  const ran: string[] = [];
  const errors: string[] = [];
  let stopped = false;
  const deps: Recovering = {
    step: (async (input: { ids: string[] }) => void ran.push(...input.ids)) as unknown as Recovering['step'],
    failed: () => stopped,
    onError: (_err, what) => void errors.push(what),
  };
  const state = { instances } as unknown as WfxState;
  return { state, executions, effects, deps, reads, archived, ran, errors, stop: () => (stopped = true) };
}

t.test('executions taken that cannot be read back yet are resumed once they can be', async (t) => {
  const f = fixture(['done-1', 'busy-1', 'busy-2'], [new Error('the database is away')]);
  t.teardown(f.stop);
  const taken = { coldFinished: ['done-1'], coldRunning: ['busy-1', 'busy-2'] };
  await resumeTaken(f.state, f.effects, f.executions, taken, f.deps);
  t.same(f.errors, ['reading back executions taken; tried again later'], 'the failure is said');
  t.same([f.archived, f.ran], [[], ['busy-1', 'busy-2']], 'the others, each read on its own, run on');
  await eventually('read back on the next try', () => f.archived.length === 1, { withinMs: 10_000 });
  t.same(f.archived, ['done-1'], 'the finished one archived');
  t.same(f.ran, ['busy-1', 'busy-2'], 'none run twice');
  t.same(f.reads, [['done-1'], ['busy-1'], ['busy-2'], ['done-1']], 'only the one that failed read again');
});

t.test('one that moved to another daemon while read is neither an error nor tried again', async (t) => {
  const f = fixture(['gone', 'stays'], [new WfxError('PARTITION_MOVING', 'moved')]);
  await resumeTaken(f.state, f.effects, f.executions, { coldFinished: [], coldRunning: ['gone', 'stays'] }, f.deps);
  t.same(f.ran, ['stays'], 'the other runs on');
  t.same(f.errors, [], 'no error');
  t.equal(f.reads.length, 2, 'no retry');
});
