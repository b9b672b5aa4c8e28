import t from 'tap';
import { constantTimeEqual } from '../../src/shared/constant-time.js';

t.test('constantTimeEqual answers byte equality, any length', async (t) => {
  t.ok(constantTimeEqual(Buffer.from('abc'), Buffer.from('abc')));
  t.notOk(constantTimeEqual(Buffer.from('abc'), Buffer.from('abd')));
  t.notOk(
    constantTimeEqual(Buffer.from('abc'), Buffer.from('abcd')),
    'a different length is not equal, and does not throw',
  );
  t.ok(constantTimeEqual(Buffer.alloc(0), Buffer.alloc(0)));
});
