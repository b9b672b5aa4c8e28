import { readFile } from 'node:fs/promises';
import t from 'tap';
import { MOVE_PROBLEM_CODES } from '../../../src/shared/api/index.js';

const docs = await readFile(new URL('../../../../docs/flows.md', import.meta.url), 'utf8');
const heading = '\n## Moving executions to another version\n';
/** The codes of the rows of the table in that section of docs/flows.md. */
const rows = docs
  .slice(docs.indexOf(heading), docs.indexOf('\n## ', docs.indexOf(heading) + 1))
  .split('\n')
  .map((line) => /^\| `([A-Z_]+)` \|/.exec(line)?.[1])
  .filter((code): code is string => code !== undefined);

t.test('every move problem code is documented in docs/flows.md, and no other', async (t) => {
  t.ok(docs.includes(heading), 'the section is found');
  t.same([...rows].sort(), [...MOVE_PROBLEM_CODES].sort());
});
