#!/usr/bin/env node
// The layering of src/, checked: which folder may import which, the daemon's rooms in their
// order, no route writing the journal, and no import cycles. Run by `npm run lint`; exits 1
// listing every violation by rule.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The project's root, or the one named (a test checks the rules on a tree of its own).
const ROOT = process.argv[2] ? resolve(process.argv[2]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** The one module of src/daemon that the CLI and the TUI may import: the daemon launcher. */
const DAEMON_ENTRY = 'daemon/process/launcher.ts';
/** The module of src/daemon that the CLI alone may also import: flow tests (`wfx test`), which run the engine's step in-process. */
const FLOW_TESTS_ENTRY = 'daemon/flow-tests/entry.ts';

/**
 * The daemon's rooms (the folders under src/daemon/), from the bottom up: a module imports
 * modules of its own room and of the rooms below it, never above, so the folders form no loop.
 * Durable files, the state and its records, the stores, the executions at rest (the stores see
 * them only through ports of theirs, store/at-rest-port.ts and store/pg/rows-at-rest-port.ts);
 * outbound HTTP and observability; the features the engine and the routes use; the engine; the
 * features built on it; flow tests (the engine in memory, which the CLI runs: `wfx test`); the
 * HTTP app; the process lifecycle; and the cluster, on top. The engine, the HTTP app and the lifecycle see
 * the cluster only through ports of their own (engine/, api/ and process/cluster-port.ts), which
 * it implements; the launcher alone loads its entry, with import(), for a daemon on PostgreSQL
 * (`--store postgres://...`): a daemon on the JSON store loads nothing of the cluster.
 */
const DAEMON_ROOMS = [
  'disk',
  'state',
  'store',
  'at-rest',
  'outbound',
  'observe',
  'files',
  'secrets',
  'auth',
  'catalogue',
  'ai',
  'voice',
  'engine',
  'jobs',
  'flows',
  'project',
  'triggers',
  'ops',
  'flow-tests',
  'api',
  'process',
  'cluster',
];
const CLUSTER_ENTRY = { file: 'daemon/cluster/rejoin.ts', loader: DAEMON_ENTRY };

/** The HTTP routes: they check and shape a change, and the catalogue writes it (they call no commit). */
const ROUTES = 'daemon/api/routes/';

/** For each layer (the first folder under src/), the layers it may import. */
const MAY_IMPORT = {
  shared: ['shared'],
  client: ['client', 'shared'],
  daemon: ['daemon', 'shared'],
  tui: ['tui', 'client', 'shared'],
  // The job worker (`wfx/worker`) runs in other programs: never the daemon's code.
  worker: ['worker', 'client', 'shared'],
  cli: ['cli', 'client', 'shared', 'tui', 'worker'],
  // The browser console: the wire contract's types and pure helpers, nothing that runs on Node.
  console: ['console', 'shared'],
};

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The relative imports of a source file: `{ spec, typeOnly, dynamic }`. Comments are blanked
 * first so an example in a doc comment is not read as an import.
 */
function importsOf(text) {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const found = [];
  const stat = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
  for (const m of code.matchAll(stat)) {
    // `import { type A, type B } from` is erased like `import type`.
    const names = m[3] ?? '';
    const braces = /^\{([^}]*)\}$/.exec(names.trim());
    const allTypes =
      braces !== null &&
      braces[1]
        .split(',')
        .filter((s) => s.trim())
        .every((s) => /^\s*type\s/.test(s));
    found.push({ spec: m[4], typeOnly: Boolean(m[2]) || allTypes, dynamic: false });
  }
  for (const m of code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm))
    found.push({ spec: m[1], typeOnly: false, dynamic: false });
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g))
    found.push({ spec: m[1], typeOnly: false, dynamic: true });
  return found.filter((i) => i.spec.startsWith('.'));
}

/** The source file an import specifier names (`./x.js` is `./x.ts` or `./x.tsx`). */
function resolveSpec(from, spec, known) {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base])
    if (known.has(candidate)) return candidate;
  return null;
}

/** Why importing `to` from `from` breaks the order of the daemon's rooms (DAEMON_ROOMS), or null. */
function roomsRule(from, to, imp) {
  if (!from.startsWith('daemon/') || !to.startsWith('daemon/')) return null;
  if (from === CLUSTER_ENTRY.loader && to === CLUSTER_ENTRY.file && imp.dynamic) return null;
  const fromRoom = from.split('/')[1];
  const toRoom = to.split('/')[1];
  const fromRank = DAEMON_ROOMS.indexOf(fromRoom);
  const toRank = DAEMON_ROOMS.indexOf(toRoom);
  if (fromRank < 0) return `src/daemon/${fromRoom} is not a room of DAEMON_ROOMS: add it where it belongs`;
  if (toRank < 0) return `src/daemon/${toRoom} is not a room of DAEMON_ROOMS: add it where it belongs`;
  if (toRank <= fromRank) return null;
  if (toRoom === 'cluster')
    return `outside src/daemon/cluster/ nothing imports it: its ports are engine/, api/ and process/cluster-port.ts, and src/${CLUSTER_ENTRY.loader} alone loads src/${CLUSTER_ENTRY.file}, with import()`;
  return `src/daemon/${fromRoom} sits below src/daemon/${toRoom} (${DAEMON_ROOMS.join(' < ')})`;
}

const files = sourceFiles(SRC);
const known = new Set(files);
const layerOf = (file) => relative(SRC, file).split('/')[0];
const problems = [];
/**
 * Static imports, type-only ones included: a cycle through types still ties two modules together
 * (neither can be read, moved or tested without the other). Dynamic imports are left out.
 */
const graph = new Map(files.map((f) => [f, []]));

for (const file of files) {
  const from = relative(SRC, file);
  const text = readFileSync(file, 'utf8');
  if (from.startsWith(ROUTES) && /\.(commit|transact)\(/.test(text))
    problems.push(`${from}: writes the journal (writes rule: a route hands its change to src/daemon/catalogue/)`);
  for (const imp of importsOf(text)) {
    // The console's stylesheet: bundled by esbuild (scripts/build.mjs), not a module of the graph.
    if (layerOf(file) === 'console' && imp.spec.endsWith('.css')) continue;
    const target = resolveSpec(file, imp.spec, known);
    if (!target) {
      problems.push(`${from}: imports ${imp.spec}, which is not a source file`);
      continue;
    }
    const to = relative(SRC, target);
    const fromLayer = layerOf(file);
    const toLayer = layerOf(target);
    const allowed =
      (MAY_IMPORT[fromLayer] ?? []).includes(toLayer) ||
      ((fromLayer === 'cli' || fromLayer === 'tui') && to === DAEMON_ENTRY) ||
      (fromLayer === 'cli' && to === FLOW_TESTS_ENTRY);
    if (!allowed)
      problems.push(
        `${from}: imports ${to} (layers rule: src/${fromLayer} may import ${MAY_IMPORT[fromLayer]?.map((l) => `src/${l}`).join(', ') ?? 'nothing of src'}${fromLayer === 'cli' || fromLayer === 'tui' ? ` and src/${DAEMON_ENTRY}` : ''}${fromLayer === 'cli' ? ` and src/${FLOW_TESTS_ENTRY}` : ''})`,
      );
    const roomsProblem = roomsRule(from, to, imp);
    if (roomsProblem) problems.push(`${from}: imports ${to} (rooms rule: ${roomsProblem})`);
    if (!imp.dynamic) graph.get(file).push(target);
  }
}

// Cycles: a depth-first search that reports each cycle once, by its members in order.
const state = new Map();
const stack = [];
const seenCycles = new Set();
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const next of graph.get(file)) {
    if (state.get(next) === 'open') {
      const cycle = stack.slice(stack.indexOf(next)).map((f) => relative(SRC, f));
      const key = [...cycle].sort().join(' ');
      if (!seenCycles.has(key)) {
        seenCycles.add(key);
        problems.push(`import cycle (cycles rule): ${[...cycle, cycle[0]].join(' -> ')}`);
      }
    } else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of files) if (!state.has(file)) visit(file);

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`\n${problems.length} import problem(s) in src/ (see scripts/check-imports.mjs for the rules)`);
  process.exit(1);
}
console.log(`imports: ${files.length} files, layering and the daemon's rooms kept, no cycles`);
