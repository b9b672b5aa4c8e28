import t from 'tap';
import { parseFlowSource } from '../../../src/shared/flow/parse.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';
import { ALIAS_BOMB } from '../../fixtures/alias-bomb.js';

/** A "billion laughs": each level aliases the one before nine times (9^7 strings if expanded). */

t.test('a YAML alias bomb is a syntax problem at the first alias, never expanded, never thrown', async (t) => {
  const parsed = parseFlowSource(ALIAS_BOMB);
  t.equal(parsed.value, undefined, 'no value');
  t.match(parsed.syntaxErrors, [{ message: /alias/, position: { line: 4, column: 8 } }]);
  const validation = validateFlowSource(ALIAS_BOMB);
  t.match(validation, { ok: false, problems: [{ code: 'SYNTAX', line: 4, column: 8 }] });
});

t.test('a few aliases are still fine', async (t) => {
  const parsed = parseFlowSource('x: &x { a: 1 }\ny: *x\nz: [*x, *x]\n');
  t.same(parsed.syntaxErrors, []);
  t.same(parsed.value, { x: { a: 1 }, y: { a: 1 }, z: [{ a: 1 }, { a: 1 }] });
});

t.test('a broken JSON flow is told in JSON terms, where JSON says it broke', async (t) => {
  const missingComma = '{\n  "processId": "x",\n  "name": "y"\n  "nodes": {}\n}\n';
  t.same(validateFlowSource(missingComma).problems, [
    { code: 'SYNTAX', message: "not valid JSON: Expected ',' or '}' after property value", line: 4, column: 3 },
  ]);
  const yamlFlowMap = validateFlowSource('{ processId: x, name: y, nodes: [ }').problems;
  t.match(yamlFlowMap, [{ code: 'SYNTAX', message: /^not valid JSON/ }], 'a text that opens like JSON is read as JSON');
  t.match(validateFlowSource('processId: x\nnodes: [\n').problems, [
    { code: 'SYNTAX', message: /^(?!not valid JSON)/ },
  ]);
});
