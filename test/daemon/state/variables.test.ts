import t from 'tap';
import { applyRecord } from '../../../src/daemon/state/records.js';
import { applyStart } from '../../helpers/state.js';
import { initialState, type WfxState } from '../../../src/daemon/state/state.js';

const at = '2026-11-23T10:00:00.000Z';

function started(variables: Record<string, unknown>): WfxState {
  const state = initialState();
  applyStart(state, 'e1', at, { variables });
  applyRecord(state, { type: 'node.entered', instanceId: 'e1', nodeInstanceId: 'n1', nodeId: 'work', at });
  return state;
}

t.test(
  "a node's variables join the execution's in order, later values winning, its start data left as it was",
  async (t) => {
    const data = { kind: 'task', amount: 1 };
    const state = started(data);
    applyRecord(state, {
      type: 'node.completed',
      instanceId: 'e1',
      nodeInstanceId: 'n1',
      at,
      variables: { amount: 2, label: 'x' },
    });
    const vars = state.instances.e1!.variables;
    t.same(Object.entries(vars), [
      ['kind', 'task'],
      ['amount', 2],
      ['label', 'x'],
    ]);
    t.same(data, { kind: 'task', amount: 1 }, 'the start data is a copy');
  },
);

t.test(
  'an own "__proto__" key from a node becomes a key of the variables, never their prototype, as replaying the journal gives it',
  async (t) => {
    const fromNode = JSON.parse('{"__proto__":{"polluted":true},"b":2}') as Record<string, unknown>;
    const state = started({ a: 1 });
    applyRecord(state, { type: 'node.completed', instanceId: 'e1', nodeInstanceId: 'n1', at, variables: fromNode });
    const vars = state.instances.e1!.variables;
    t.equal(Object.getPrototypeOf(vars), Object.prototype, 'the prototype is never set from data');
    t.notOk('polluted' in vars, 'nothing inherited');
    t.same(Object.keys(vars), ['a', '__proto__', 'b']);
    t.equal(JSON.stringify(vars), '{"a":1,"__proto__":{"polluted":true},"b":2}', 'a snapshot writes it as it came');

    // What the journal holds (each record as JSON), replayed into a fresh state, reads the same.
    const replayed = started({ a: 1 });
    applyRecord(
      replayed,
      JSON.parse(
        JSON.stringify({ type: 'node.completed', instanceId: 'e1', nodeInstanceId: 'n1', at, variables: fromNode }),
      ),
    );
    t.equal(JSON.stringify(replayed.instances.e1!.variables), JSON.stringify(vars));
  },
);

t.test('an own "__proto__" key in the start data stays a key, and a node can change it', async (t) => {
  const state = started(JSON.parse('{"a":1,"__proto__":{"inherited":true}}') as Record<string, unknown>);
  applyRecord(state, {
    type: 'node.completed',
    instanceId: 'e1',
    nodeInstanceId: 'n1',
    at,
    variables: JSON.parse('{"__proto__":2}') as Record<string, unknown>,
  });
  const vars = state.instances.e1!.variables;
  t.equal(Object.getPrototypeOf(vars), Object.prototype);
  t.notOk('inherited' in vars);
  t.equal(JSON.stringify(vars), '{"a":1,"__proto__":2}');
});
