import t from 'tap';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';

const loop = (props: string) => `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
${props}
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

t.test("a loopNode's maxIterations and concurrency have ceilings, refused at publish with their place", async (t) => {
  const forever = validateFlowSource(loop('    condition: "${true}"\n    maxIterations: 100000000'));
  t.notOk(forever.ok, 'maxIterations 100,000,000: refused');
  t.match(!forever.ok && forever.problems, [{ nodeId: 'each', property: 'maxIterations', line: 8 }]);
  const wide = validateFlowSource(loop('    collection: "{items}"\n    parallel: true\n    concurrency: 100000'));
  t.notOk(wide.ok, 'concurrency 100,000: refused');
  t.match(!wide.ok && wide.problems, [{ nodeId: 'each', property: 'concurrency' }]);
  t.ok(validateFlowSource(loop('    condition: "${true}"\n    maxIterations: 100000')).ok, 'at the ceiling: valid');
  t.ok(
    validateFlowSource(loop('    collection: "{items}"\n    parallel: true\n    concurrency: 1000')).ok,
    'concurrency at the ceiling: valid',
  );
});
