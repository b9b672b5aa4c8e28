import { readFile } from 'node:fs/promises';
import t from 'tap';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { ERROR_CODES, WfxError, errorMessage, isWfxError, type ErrorCode } from '../../src/shared/errors.js';

const docs = await readFile(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

t.test('every error code is documented in docs/errors.md with its HTTP status and exit code', async (t) => {
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    const row = docs.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    if (!row) {
      t.fail(`${code} is not in docs/errors.md`);
      continue;
    }
    const cells = row.split('|').map((c) => c.trim());
    const status = ERROR_CODES[code].status;
    if (cells[2] !== '—') t.match(cells[2], String(status), `${code}: HTTP ${status}`);
    t.equal(cells[4], String(exitCodeFor(code)), `${code}: exit ${exitCodeFor(code)}`);
  }
});

t.test('WfxError carries code, status, hint and details', async (t) => {
  const err = new WfxError('DATA_DIR_LOCKED', 'busy', { details: { pid: 1 } });
  t.equal(err.status, 500);
  t.match(err.hint, /wfx daemon stop/);
  t.same(err.details, { pid: 1 });
  t.ok(isWfxError(err, 'DATA_DIR_LOCKED'));
  t.notOk(isWfxError(err, 'FORBIDDEN'));
  t.notOk(isWfxError(new Error('x')));
});

t.test('errorMessage reads any thrown value', async (t) => {
  t.equal(errorMessage(new WfxError('FORBIDDEN', 'no')), 'no');
  t.equal(errorMessage(new AggregateError([])), 'AggregateError', 'an empty message gives the name');
  t.equal(errorMessage('plain'), 'plain');
  t.equal(errorMessage(undefined), 'undefined');
});
