import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';

const FLOW = `processId: 7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f
name: Ends
nodes:
  start: { type: startEvent, next: route }
  route: { type: ifElse, condition: "\${fail}", then: boom, else: out }
  boom: { type: ifElse, condition: "\${undefinedVariable > 1}", then: out, else: out }
  out: { type: outputNode, outputs: { ok: true }, next: end }
  end: { type: endEvent }
`;

t.test('wfx logs --follow ends as wfx run --follow does: the state, the error, the output', async (t) => {
  const cwd = t.testdir({ 'ends.yaml': FLOW });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'ends.yaml'])).code, 0);

  const ok = (await run(['run', 'Ends', '--set', 'fail=false', '--wait', '--json'])).stdout;
  const okId = (JSON.parse(ok) as { processInstanceId: string }).processInstanceId;
  const text = await run(['logs', okId, '--follow']);
  t.equal(text.code, 0, text.stderr);
  t.same(text.stdout.trimEnd().split('\n').slice(-2), [`${okId} completed`, 'output: {"ok":true}']);
  t.match(text.stdout, / route: completed: took else to out$/m, 'the branch taken, in the log');

  const json = await run(['logs', okId, '--follow', '--json']);
  const lines = json.stdout.trimEnd().split('\n');
  for (const line of lines) JSON.parse(line);
  t.match(JSON.parse(lines.at(-1)!), { processInstanceId: okId, state: 'COMPLETED', output: { ok: true } });
  t.match(JSON.parse(lines[0]!), { id: Number, message: String }, 'the log lines before it');

  const failed = await run(['run', 'Ends', '--set', 'fail=true', '--wait', '--json']);
  const failedId = (JSON.parse(failed.stdout) as { processInstanceId: string }).processInstanceId;
  const followed = await run(['logs', failedId, '--follow']);
  t.equal(followed.stdout.trimEnd().split('\n').at(-1), `${failedId} failed`);
  t.match(followed.stderr, /^EXPRESSION_ERROR: .* \(node boom\)$/m, "the error's code and node");
});
