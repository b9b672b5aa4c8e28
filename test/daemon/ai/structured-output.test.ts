import t from 'tap';
import { AnswerChecker, jsonInstruction, repairMessage } from '../../../src/daemon/ai/structured-output.js';

const schema = {
  type: 'object',
  properties: { label: { enum: ['a', 'b'] }, score: { type: 'number', minimum: 0 } },
  required: ['label'],
  additionalProperties: false,
};

t.test('valid JSON matching the schema gives its data; a code fence around it is tolerated', async (t) => {
  const checker = new AnswerChecker();
  t.same(checker.check('{"label":"a","score":1}', schema), { ok: true, data: { label: 'a', score: 1 } });
  t.same(checker.check('```json\n{"label":"b"}\n```', schema), { ok: true, data: { label: 'b' } });
  t.same(checker.check(' [1,2] ', undefined), { ok: true, data: [1, 2] });
});

t.test('the first violation is named by its JSON pointer', async (t) => {
  const checker = new AnswerChecker();
  t.match(checker.check('{"label":"c"}', schema), {
    ok: false,
    violation: /^\/label must be equal to one of the allowed values \(\["a","b"\]\)/,
  });
  t.match(checker.check('{"label":"a","score":-1}', schema), { ok: false, violation: /^\/score must be >= 0/ });
  t.match(checker.check('{"score":1}', schema), { ok: false, violation: /^\/ must have required property 'label'/ });
  t.match(checker.check('{"label":"a","x":1}', schema), { ok: false, violation: /additional properties \("x"\)/ });
  t.match(checker.check('{"label":', schema), { ok: false, violation: /^not JSON: / });
  t.match(checker.check('   ', undefined), { ok: false, violation: 'the answer is empty, not JSON' });
});

t.test('a schema is compiled once: by identity, and by its JSON text', async (t) => {
  const checker = new AnswerChecker();
  const first = checker.compile(schema);
  t.equal(checker.compile(schema), first);
  t.equal(checker.compile(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>), first);
  t.throws(() => checker.compile({ type: 'no-such-type' }));
});

t.test('repair and instruction messages', async (t) => {
  t.match(repairMessage('/label must be string', schema), {
    role: 'user',
    content: /\/label must be string.*JSON Schema/,
  });
  t.match(jsonInstruction(schema), { role: 'system', content: JSON.stringify(schema) });
  t.match(jsonInstruction(undefined), { role: 'system', content: /JSON value only/ });
});

t.test('an answer that is not JSON is said so without quoting it (the violation is a log line)', async (t) => {
  const checker = new AnswerChecker();
  for (const text of ['Sure! my secret answer', '{"label": "ham", oops', '{"label":'])
    t.match(checker.check(text, undefined), { ok: false, violation: /^not JSON: / });
  const shown = JSON.stringify(
    ['Sure! my secret answer', '{"label": "ham", oops'].map((x) => checker.check(x, undefined)),
  );
  t.notMatch(shown, /secret|oops|Sure/);
});
