import t from 'tap';
import { isFlowFile, isFlowTestFile } from '../../../src/shared/flow/files.js';

t.test('a flow directory publishes its flows, not the flow tests beside them', async (t) => {
  for (const name of ['order.yaml', 'order.yml', 'order.json', 'ORDER.YAML', 'order.testing.yaml'])
    t.equal(isFlowFile(name), true, name);
  for (const name of ['order.test.yaml', 'order.test.yml', 'order.TEST.YAML', 'notes.md', 'order.yaml.bak'])
    t.equal(isFlowFile(name), false, name);
});

t.test('a flow test file is one named *.test.yaml or *.test.yml', async (t) => {
  t.ok(isFlowTestFile('flows/order.test.yaml'));
  t.ok(isFlowTestFile('order.TEST.yml'));
  t.notOk(isFlowTestFile('order.yaml'));
  t.notOk(isFlowTestFile('order.test.json'));
});
