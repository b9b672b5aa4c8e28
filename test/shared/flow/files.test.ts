import t from 'tap';
import { isFlowFile } from '../../../src/shared/flow/files.js';

t.test('a flow directory publishes its flows, not the flow tests beside them', async (t) => {
  for (const name of ['order.yaml', 'order.yml', 'order.json', 'ORDER.YAML', 'order.testing.yaml'])
    t.equal(isFlowFile(name), true, name);
  for (const name of ['order.test.yaml', 'order.test.yml', 'order.TEST.YAML', 'notes.md', 'order.yaml.bak'])
    t.equal(isFlowFile(name), false, name);
});
