import { readFile } from 'node:fs/promises';
import t from 'tap';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import {
  NODE_FAILURE_CODES,
  failureOfThrown,
  isNodeFailureCode,
  type NodeFailureCode,
} from '../../../src/shared/flow/failure-codes.js';

const docs = await readFile(new URL('../../../../docs/flows.md', import.meta.url), 'utf8');
/** The codes of the rows of the table under "## Failure codes" in docs/flows.md. */
const section = docs.slice(
  docs.indexOf('\n## Failure codes\n'),
  docs.indexOf('\n## ', docs.indexOf('\n## Failure codes\n') + 1),
);
const rows = section
  .split('\n')
  .map((line) => /^\| `([A-Z0-9_<>a-z]+)` \|/.exec(line)?.[1])
  .filter((code): code is string => code !== undefined);

t.test('every node failure code is documented in the failure codes table of docs/flows.md', async (t) => {
  t.ok(rows.length > 0, 'the table is found');
  for (const code of Object.keys(NODE_FAILURE_CODES)) t.ok(rows.includes(code), `${code} is in docs/flows.md`);
  const patterns = ['HTTP_<status>', 'AI_HTTP_<status>'];
  for (const p of patterns) t.ok(rows.includes(p), `${p} is in docs/flows.md`);
  for (const code of rows)
    t.ok(patterns.includes(code) || Object.hasOwn(NODE_FAILURE_CODES, code), `the row ${code} is a catalogue code`);
});

t.test('the API error codes a node keeps from a thrown WfxError are exactly these', async (t) => {
  // Any other WfxError a node meets (VALIDATION_ERROR, say) is a bug there: INTERNAL_ERROR.
  const shared = Object.keys(NODE_FAILURE_CODES).filter((code) => Object.hasOwn(ERROR_CODES, code));
  t.same(shared.sort(), [
    'DOMAIN_NOT_FOUND',
    'EXECUTION_LIMIT_EXCEEDED',
    'EXPRESSION_ERROR',
    'FILE_NOT_FOUND',
    'INTERNAL_ERROR',
    'JOB_OUTPUT_INVALID',
    'ORG_RATE_EXCEEDED',
    'PROCESS_NOT_FOUND',
    'PROCESS_NOT_PUBLISHED',
    'SECRET_UNREADABLE',
    'VERSION_NOT_FOUND',
  ]);
});

t.test('isNodeFailureCode: catalogue codes, HTTP_<status> and AI_HTTP_<status>, nothing else', async (t) => {
  for (const code of ['NO_BRANCH_MATCHED', 'HTTP_TIMEOUT', 'INTERNAL_ERROR', 'HTTP_404', 'HTTP_503', 'AI_HTTP_400'])
    t.ok(isNodeFailureCode(code), code);
  for (const code of [
    'ENOENT',
    'INVALID_DURATION',
    'VALIDATION_ERROR',
    'HTTP_',
    'HTTP_4',
    'HTTP_0404',
    'HTTP_1e3',
    'AI_HTTP_',
    'AI_HTTP_42',
    'XAI_HTTP_400',
    'toString',
    'constructor',
    '',
  ]) {
    t.notOk(isNodeFailureCode(code), code);
  }
});

t.test('failureOfThrown keeps a catalogue code and turns anything else into INTERNAL_ERROR', async (t) => {
  t.same(failureOfThrown(Object.assign(new Error('gone'), { code: 'LOOP_LIMIT' })), {
    code: 'LOOP_LIMIT',
    message: 'gone',
  });
  t.same(failureOfThrown(Object.assign(new Error('503'), { code: 'HTTP_503' })), { code: 'HTTP_503', message: '503' });
  t.same(failureOfThrown(Object.assign(new Error('no such file'), { code: 'ENOENT' })), {
    code: 'INTERNAL_ERROR',
    message: 'ENOENT: no such file',
  });
  t.same(failureOfThrown(new TypeError('x is not a function')), {
    code: 'INTERNAL_ERROR',
    message: 'x is not a function',
  });
  t.same(failureOfThrown('thrown text'), { code: 'INTERNAL_ERROR', message: 'thrown text' });
  t.same(failureOfThrown(null), { code: 'INTERNAL_ERROR', message: 'null' });
  t.same(failureOfThrown({ code: 7 }), { code: 'INTERNAL_ERROR', message: '[object Object]' });
});

t.test('a code outside the catalogue does not compile', async (t) => {
  const documented: NodeFailureCode[] = ['NO_BRANCH_MATCHED', 'HTTP_418'];
  // @ts-expect-error a typo is no node failure code
  const typo: NodeFailureCode = 'NO_BRANCH_MATCHD';
  // @ts-expect-error nor is an error of the system
  const errno: NodeFailureCode = 'ENOENT';
  t.equal(documented.length + [typo, errno].length, 4);
});
