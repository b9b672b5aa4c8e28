import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const CHECK = fileURLToPath(new URL('../../../scripts/check-words.mjs', import.meta.url));

/** Runs the words check on the tree at `root`: its exit code and what it said. */
function check(root: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CHECK, root], { timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

const tree = (engine: string) => ({
  src: { daemon: { engine: { 'engine.ts': engine } } },
  test: { helpers: { 'ink.ts': "import { type Instance } from 'ink';\nexport type I = Instance;\n" } },
});

t.test('the words in use pass, and a node instance, the wire and another library keep theirs', async (t) => {
  const ok =
    "import type { Execution, NodeInstance } from '../state/state.js';\n" +
    'export const key = (e: Execution, n: NodeInstance) => `${e.processInstanceId}/${n.id}`;\n' +
    "export const records = ['instance.started'];\n";
  const r = await check(t.testdir(tree(ok)));
  t.equal(r.code, 0, r.out);
  t.match(r.out, /no retired word/);
});

t.test('a retired word planted in new code is refused, with the word to say instead', async (t) => {
  const planted =
    "import type { Instance } from '../state/state.js';\n" +
    "import { COMMONS } from '../store/pg/partitions.js';\n" +
    'export const SHARED_PARTITION = COMMONS;\n' +
    'export type E = Instance;\n';
  const r = await check(t.testdir(tree(planted)));
  t.equal(r.code, 1);
  t.match(r.out, /src\/daemon\/engine\/engine\.ts:1: a retired word .*Execution/);
  t.match(r.out, /src\/daemon\/engine\/engine\.ts:3: a retired word .*COMMONS_PARTITION/);
  t.match(r.out, /engine\.ts:4:/);
  t.notMatch(r.out, /ink\.ts/, "ink's Instance is not ours");
});
