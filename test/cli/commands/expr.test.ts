import t from 'tap';
import { wfxIn } from '../../helpers/cli.js';

t.test('wfx expr evaluates conditions and templates like the engine', async (t) => {
  const vars = JSON.stringify({ order: { id: 42, total: 250 }, approved: true });
  const cond = await wfxIn(['expr', '${order.total < 1000 && approved}', '--vars', vars]);
  t.equal(cond.code, 0);
  t.equal(cond.stdout, 'true\n');
  t.equal((await wfxIn(['expr', '${7 div 2}'])).stdout, '3.5\n');
  const tpl = await wfxIn(['expr', 'Approve order {order.id}? {nope}', '--vars', vars]);
  t.equal(tpl.stdout, '"Approve order 42? "\n');
  t.match(tpl.stderr, /WARN: reference \{nope\} is missing/);
  t.equal(
    (await wfxIn(['expr', '{order}', '--vars', vars])).stdout,
    `${JSON.stringify({ id: 42, total: 250 }, null, 2)}\n`,
    'a lone reference keeps its type',
  );
  t.equal((await wfxIn(['expr', '{env.URL}/x', '--env', '{"URL":"http://h"}'])).stdout, '"http://h/x"\n');
  const bad = await wfxIn(['expr', '${1 +}']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^EXPRESSION_ERROR: /);
  const unknown = await wfxIn(['expr', '${nope > 1}']);
  t.equal(unknown.code, 2, 'an unknown variable is an error, as in the engine');
  const badVars = await wfxIn(['expr', '${1}', '--vars', '{not json']);
  t.equal(badVars.code, 2);
  t.match(badVars.stderr, /^USAGE_ERROR: --vars is not valid JSON/);
});
