import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const CHECK = fileURLToPath(new URL('../../../scripts/check-imports.mjs', import.meta.url));

/** Runs the import check on the tree at `root`: its exit code and what it said. */
function check(root: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CHECK, root], { timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/** A daemon of three rooms: the state, the engine above it, the cluster on top. */
const daemon = (stateImports: string, launcher: string) => ({
  src: {
    daemon: {
      state: { 'state.ts': `${stateImports}export const state = 1;\n` },
      engine: {
        'engine.ts': "import { state } from '../state/state.js';\nexport const engine = state;\n",
        'cluster-port.ts': 'export interface EngineCluster { readonly on: boolean }\n',
      },
      cluster: {
        'rejoin.ts':
          "import type { EngineCluster } from '../engine/cluster-port.js';\nexport type P = EngineCluster;\n",
      },
      process: { 'launcher.ts': launcher },
    },
  },
});

const LAUNCHER = "export const load = () => import('../cluster/rejoin.js');\n";

t.test("the daemon's rooms in order pass, and the launcher's import() of the cluster's entry with them", async (t) => {
  const r = await check(t.testdir(daemon('', LAUNCHER)));
  t.equal(r.code, 0, r.out);
  t.match(r.out, /layering and the daemon's rooms kept, no cycles/);
});

t.test('an import from a room to one above it is refused, by name', async (t) => {
  const r = await check(t.testdir(daemon("import '../engine/engine.js';\n", LAUNCHER)));
  t.equal(r.code, 1);
  t.match(
    r.out,
    /daemon\/state\/state\.ts: imports daemon\/engine\/engine\.ts \(rooms rule: src\/daemon\/state sits below src\/daemon\/engine/,
  );
});

t.test('the cluster is imported by nothing but the launcher, and only with import()', async (t) => {
  const r = await check(t.testdir(daemon('', "export { type P } from '../cluster/rejoin.js';\n")));
  t.equal(r.code, 1);
  t.match(
    r.out,
    /process\/launcher\.ts: imports daemon\/cluster\/rejoin\.ts \(rooms rule: outside src\/daemon\/cluster\/ nothing imports it/,
  );
});

t.test('a folder of the daemon that is not a room in the order is refused', async (t) => {
  const tree = daemon("import '../extra/x.js';\n", LAUNCHER);
  (tree.src.daemon as Record<string, unknown>).extra = { 'x.ts': 'export const x = 1;\n' };
  const r = await check(t.testdir(tree));
  t.equal(r.code, 1);
  t.match(r.out, /src\/daemon\/extra is not a room of DAEMON_ROOMS/);
});

t.test('a route that writes the journal itself is refused: the catalogue writes what routes change', async (t) => {
  const tree = daemon('', LAUNCHER);
  (tree.src.daemon as Record<string, unknown>).api = {
    routes: { 'keys.ts': 'export const save = (store: { commit(): void }) => store.commit();\n' },
  };
  const r = await check(t.testdir(tree));
  t.equal(r.code, 1);
  t.match(r.out, /daemon\/api\/routes\/keys\.ts: writes the journal \(writes rule/);
});
