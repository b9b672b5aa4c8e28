/**
 * Flow tests, the CLI's door to them (`wfx test`): finds the test files under the paths given,
 * reads each with the flow it names, and runs their cases in this process on the engine's own
 * step (run-case.ts). No daemon, no data directory, no network unless allowed.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { RegisterDomainBody } from '../../shared/api/index.js';
import { errorMessage } from '../../shared/errors.js';
import { parseFlowSource } from '../../shared/flow/parse.js';
import type { FlowDefinition } from '../../shared/flow/types.js';
import { domainOf } from '../jobs/domains.js';
import type { Domain } from '../state/state.js';
import { validateFlowSource } from '../../shared/flow/validate.js';
import { createScriptRunner, type ScriptRunner } from '../engine/work/script.js';
import { FlowCoverage, percent } from './coverage.js';
import { CASE_EPOCH, runCase } from './run-case.js';
import { totalCoverage, type FileRun, type FlowCoverageRun, type TestRun } from './report.js';
import { readTestFile, type TestFileProblem } from './test-file.js';

export {
  report,
  REPORTERS,
  totals,
  totalCoverage,
  problemLine,
  type Reporter,
  type TestRun,
  type FlowCoverageRun,
} from './report.js';

/** What the run found of a flow's coverage (TestRun.coverage). */
function coverageOf(c: FlowCoverage, cases: FlowCoverageRun['cases']): FlowCoverageRun {
  const { nodes, branches } = c.counts();
  return {
    flow: c.file,
    processId: c.processId,
    hash: c.hash,
    cases,
    nodes,
    branches,
    percent: percent(nodes[0] + branches[0], nodes[1] + branches[1]),
    missed: c
      .list()
      .filter((i) => !i.covered)
      .map((i) =>
        i.part === 'node' ? `${i.node} not reached` : `${i.node} ${i.part}${i.to ? ` → ${i.to}` : ''} not taken`,
      ),
    covered: c
      .list()
      .filter((i) => i.covered)
      .map((i) => ({ node: i.node, part: i.part })),
  };
}

/** What a run is asked for. */
export interface FlowTestOptions {
  /** Files and directories (directories searched for `*.test.yaml`, `*.test.yml`); default the current directory. */
  readonly paths: readonly string[];
  /** Runs only the cases whose name contains this text. */
  readonly grep?: string;
  /** Unmocked serviceTasks call the network. */
  readonly allowNetwork?: boolean;
  /** Records which nodes and branches of each flow the cases took (TestRun.coverage). */
  readonly coverage?: boolean;
  /** Where paths are relative to, and what shown paths are relative to (default the process's). */
  readonly cwd?: string;
}

/**
 * A run's exit code (SPEC.md section 11): 0 all passed, 1 a case failed (or the coverage of all
 * flows together is under `coverageMin`, a percentage), 2 a test file or flow is invalid.
 */
export function exitCodeOf(run: TestRun, coverageMin?: number): 0 | 1 | 2 {
  if (run.problems.length > 0) return 2;
  if (run.files.some((f) => f.cases.some((c) => !c.ok))) return 1;
  return coverageMin !== undefined && totalCoverage(run) < coverageMin ? 1 : 0;
}

const TEST_FILE = /\.test\.ya?ml$/;

/** The test files under `paths`, sorted; a path that is a file is taken as one. Skips dot folders and node_modules. */
export async function findTestFiles(paths: readonly string[], cwd: string): Promise<string[]> {
  const found = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile() && TEST_FILE.test(e.name)) found.add(path);
    }
  };
  for (const p of paths.length > 0 ? paths : ['.']) {
    const full = resolve(cwd, p);
    if ((await stat(full)).isDirectory()) await walk(full);
    else found.add(full);
  }
  return [...found].sort();
}

/**
 * Domain `name` from the file a test file (at `testPath`) names, as `wfx domains register` reads
 * it (YAML or JSON: actions and their schemas); null, with its problems added, when it cannot be.
 */
async function readDomain(
  testPath: string,
  named: string,
  name: string,
  file: string,
  problems: TestFileProblem[],
): Promise<Domain | null> {
  let text: string;
  try {
    text = await readFile(resolve(dirname(testPath), named), 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    problems.push({ file, message: `domain file ${named}: ${why}` });
    return null;
  }
  const parsed = parseFlowSource(text);
  const body = parsed.value as RegisterDomainBody | null;
  const first = parsed.syntaxErrors[0];
  if (first !== undefined || body === null || typeof body !== 'object' || typeof body.actions !== 'object') {
    const message = first?.message ?? 'a domain file has `actions:`, each with its input and output schemas';
    problems.push({ file: named, ...first?.position, message });
    return null;
  }
  try {
    return domainOf('default', name, body, new Date(CASE_EPOCH).toISOString(), undefined);
  } catch (err) {
    problems.push({ file: named, message: errorMessage(err) });
    return null;
  }
}

/** Runs the flow tests `options` name (see the top of this file). */
export async function runFlowTests(options: FlowTestOptions): Promise<TestRun> {
  const began = performance.now();
  const cwd = options.cwd ?? process.cwd();
  const shown = (path: string) => relative(cwd, path) || path;
  const files: FileRun[] = [];
  const problems: TestFileProblem[] = [];
  /** Coverage by flow file: one per flow, whichever test files test it, with its cases' outcomes. */
  const coverage = new Map<string, { of: FlowCoverage; passed: number; failed: number }>();
  let scripts: ScriptRunner | null = null;
  try {
    for (const path of await findTestFiles(options.paths, cwd)) {
      const file = shown(path);
      const read = readTestFile(file, await readFile(path, 'utf8'));
      if (!read.ok) {
        problems.push(...read.problems);
        continue;
      }
      const flowPath = resolve(dirname(path), read.test.flow);
      const readFlow = async (named: string): Promise<FlowDefinition | null> => {
        const at = resolve(dirname(path), named);
        let source: string;
        try {
          source = await readFile(at, 'utf8');
        } catch (err) {
          const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
          problems.push({ file, message: `flow file ${named}: ${why}` });
          return null;
        }
        const v = validateFlowSource(source);
        if (v.ok) return v.flow;
        for (const p of v.problems)
          problems.push({ file: shown(at), line: p.line, column: p.column, message: `${p.code}: ${p.message}` });
        return null;
      };
      const others: FlowDefinition[] = [];
      for (const named of read.test.flows) {
        const other = await readFlow(named);
        if (other !== null) others.push(other);
      }
      const domains: Domain[] = [];
      for (const [name, named] of Object.entries(read.test.domains)) {
        const domain = await readDomain(path, named, name, file, problems);
        if (domain !== null) domains.push(domain);
      }
      const main = await readFlow(read.test.flow);
      if (main === null || others.length < read.test.flows.length) continue;
      if (domains.length < Object.keys(read.test.domains).length) continue;
      const flow = { flow: main };
      const cases = read.test.cases.filter((c) => options.grep === undefined || c.name.includes(options.grep));
      if (cases.length === 0) continue; // --grep left none of its cases
      let covered = coverage.get(flowPath);
      if (options.coverage === true && covered === undefined)
        coverage.set(flowPath, (covered = { of: new FlowCoverage(shown(flowPath), flow.flow), passed: 0, failed: 0 }));
      const results = [];
      for (const c of cases)
        results.push(
          await runCase(c, {
            flow: flow.flow,
            flows: others,
            domains,
            scripts: () => (scripts ??= createScriptRunner()),
            allowNetwork: options.allowNetwork === true,
            ...(covered !== undefined && { coverage: covered.of }),
          }),
        );
      if (covered !== undefined)
        for (const r of results) {
          if (r.ok) covered.passed++;
          else covered.failed++;
        }
      files.push({ file, flow: shown(flowPath), cases: results });
    }
  } finally {
    await (scripts as ScriptRunner | null)?.close();
  }
  return {
    files,
    problems,
    ms: performance.now() - began,
    ...(options.coverage === true && {
      coverage: [...coverage.values()].map((c) => coverageOf(c.of, { passed: c.passed, failed: c.failed })),
    }),
  };
}
