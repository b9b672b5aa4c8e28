import t from 'tap';
import { ifElse, exclusiveGateway, inclusiveGateway, tookOf } from '../../../src/daemon/engine/nodes/gateways.js';
import type { NodeScope } from '../../../src/daemon/engine/nodes/handler.js';
import type { GatewayNode, IfElseNode } from '../../../src/shared/flow/types.js';

/** A scope whose conditions hold when listed in `holding`. */
const scope = (holding: readonly string[]) =>
  ({ nodeId: 'g', condition: (c: string) => holding.includes(c) }) as unknown as NodeScope;

t.test('tookOf reads back what a gateway logs it took, whatever its conditions hold', async (t) => {
  const node: IfElseNode = { type: 'ifElse', condition: '${a > 1}', then: 'x', else: 'y' };
  const then = ifElse.run(node, scope(['${a > 1}']));
  const otherwise = ifElse.run(node, scope([]));
  t.same(tookOf(`completed: ${(then as { note: string }).note}`), [{ via: '${a > 1}', to: 'x' }]);
  t.same(tookOf(`completed: ${(otherwise as { note: string }).note}`), [{ via: 'else', to: 'y' }]);

  // Conditions with quotes, backslashes and the ", " that joins several branches.
  const tricky = ['${s == "a, b"}', "${t == '\\\\' || u}", '${v}'];
  const gateway: GatewayNode = {
    type: 'inclusiveGateway',
    branches: tricky.map((condition, i) => ({ condition, next: `n${i}` })),
    default: 'd',
  };
  const all = exclusiveGateway.run({ ...gateway, type: 'exclusiveGateway' }, scope(tricky));
  t.same(tookOf(`completed: ${(all as { note: string }).note}`), [{ via: tricky[0], to: 'n0' }]);
  const inclusive = { ...gateway, type: 'inclusiveGateway' } as const;
  const many = inclusiveGateway.run(inclusive, scope(tricky));
  t.same(
    tookOf(`completed: ${(many as { note: string }).note}`),
    tricky.map((via, i) => ({ via, to: `n${i}` })),
  );
  const fallback = inclusiveGateway.run(inclusive, scope([]));
  t.same(tookOf(`completed: ${(fallback as { note: string }).note}`), [{ via: 'default', to: 'd' }]);
  t.same(tookOf('completed'), [], 'any other line took nothing');
  t.same(tookOf('waiting for input'), []);
});
