/**
 * A flow test run written out: for a person on a terminal (`spec`), for TAP consumers (`tap`),
 * for CI servers that read JUnit XML (GitLab, GitHub Actions, Jenkins: `junit`) and for scripts
 * (`json`). Pure: each takes the run and returns the text.
 */
import type { CaseFailure, CaseResult } from './run-case.js';
import type { TestFileProblem } from './test-file.js';

/** The cases of one test file, run. */
export interface FileRun {
  readonly file: string;
  readonly flow: string;
  readonly cases: readonly CaseResult[];
}

/** What a run took of one flow (`--coverage`): covered and total, nodes and branches apart. */
export interface FlowCoverageRun {
  readonly flow: string;
  /** The flow's processId, and the hash its definition is published under (flows/flow-hash.ts). */
  readonly processId: string;
  readonly hash: string;
  /** The cases that ran on it, passed and failed. */
  readonly cases: { readonly passed: number; readonly failed: number };
  readonly nodes: readonly [number, number];
  readonly branches: readonly [number, number];
  /** Nodes and branches together. */
  readonly percent: number;
  /** What no case took, in the flow's order: `decide then → ask not taken`. */
  readonly missed: readonly string[];
  /** What the cases took (coverage-items.ts names them), as the console draws it. */
  readonly covered: readonly { readonly node: string; readonly part: string }[];
}

/** A whole run: the files whose cases ran, and the problems of those that could not. */
export interface TestRun {
  readonly files: readonly FileRun[];
  readonly problems: readonly TestFileProblem[];
  readonly ms: number;
  /** Per flow file, with `--coverage`. */
  readonly coverage?: readonly FlowCoverageRun[];
}

/** The coverage of every flow together, as a percentage (100 with none measured). */
export function totalCoverage(run: TestRun): number {
  let covered = 0;
  let total = 0;
  for (const c of run.coverage ?? []) {
    covered += c.nodes[0] + c.branches[0];
    total += c.nodes[1] + c.branches[1];
  }
  return total === 0 ? 100 : (covered * 100) / total;
}

/** The coverage as lines for a terminal (and TAP's comments). */
export function coverageLines(run: TestRun): string[] {
  if (run.coverage === undefined) return [];
  const out = ['coverage (nodes reached, branches taken):'];
  for (const c of run.coverage) {
    out.push(
      `  ${c.flow}: ${c.percent.toFixed(1)}% (nodes ${c.nodes[0]}/${c.nodes[1]}, branches ${c.branches[0]}/${c.branches[1]})`,
    );
    for (const m of c.missed) out.push(`    ${m}`);
  }
  if (run.coverage.length > 1) out.push(`  all flows: ${totalCoverage(run).toFixed(1)}%`);
  return out;
}

export const REPORTERS = ['spec', 'tap', 'junit', 'json'] as const;
export type Reporter = (typeof REPORTERS)[number];

/** The run's counts. */
export function totals(run: TestRun): { passed: number; failed: number; cases: number } {
  let passed = 0;
  let failed = 0;
  for (const f of run.files)
    for (const c of f.cases) {
      if (c.ok) passed++;
      else failed++;
    }
  return { passed, failed, cases: passed + failed };
}

/** `run` as `reporter` writes it. */
export function report(run: TestRun, reporter: Reporter): string {
  switch (reporter) {
    case 'spec':
      return spec(run);
    case 'tap':
      return tap(run);
    case 'junit':
      return junit(run);
    case 'json':
      return `${JSON.stringify({ ...totals(run), ms: Math.round(run.ms), files: run.files, problems: run.problems, ...(run.coverage && { coverage: run.coverage }) }, null, 2)}\n`;
  }
}

/** Problems by the file they are in, in the order met. */
function byFile(problems: readonly TestFileProblem[]): Map<string, TestFileProblem[]> {
  const out = new Map<string, TestFileProblem[]>();
  for (const p of problems) {
    const list = out.get(p.file);
    if (list === undefined) out.set(p.file, [p]);
    else list.push(p);
  }
  return out;
}

/** A problem as a line: `file:line:column: message`. */
export function problemLine(p: TestFileProblem): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}:${p.column ?? 1}`;
  return `${where}: ${p.message}`;
}

const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The lines that say what a failure found, indented by `pad`. */
function failureLines(f: CaseFailure, pad: string): string[] {
  const lines = [`${pad}${f.message}`, `${pad}at ${f.at}`];
  if (f.expected !== undefined) lines.push(`${pad}expected: ${show(f.expected)}`);
  if (f.actual !== undefined) lines.push(`${pad}actual:   ${show(f.actual)}`);
  lines.push(`${pad}path:     ${f.path.length > 0 ? f.path.join(' → ') : '(no node ran)'}`);
  return lines;
}

function spec(run: TestRun): string {
  const out: string[] = [];
  for (const f of run.files) {
    out.push(`${f.file} (${f.flow})`);
    for (const c of f.cases) {
      out.push(`  ${c.ok ? '✓' : '✗'} ${c.name} (${c.ms.toFixed(0)} ms)`);
      if (c.failure) out.push(...failureLines(c.failure, '      '));
    }
  }
  for (const p of run.problems) out.push(problemLine(p));
  const cover = coverageLines(run);
  if (cover.length > 0) out.push('', ...cover);
  const t = totals(run);
  const invalid = byFile(run.problems).size;
  const bad = invalid > 0 ? `, ${invalid} invalid file${invalid === 1 ? '' : 's'}` : '';
  out.push(
    '',
    `${t.passed} passed, ${t.failed} failed${bad} (${t.cases} case${t.cases === 1 ? '' : 's'} in ${run.files.length} file${run.files.length === 1 ? '' : 's'}, ${Math.round(run.ms)} ms)`,
  );
  return `${out.join('\n')}\n`;
}

/** A YAML string TAP's diagnostics can hold whatever the text. */
const yamlString = (s: string): string => JSON.stringify(s);

function tap(run: TestRun): string {
  const out = ['TAP version 14'];
  let n = 0;
  for (const f of run.files)
    for (const c of f.cases) {
      n++;
      out.push(`${c.ok ? 'ok' : 'not ok'} ${n} - ${f.file} > ${c.name} # time=${c.ms.toFixed(1)}ms`);
      if (c.failure) {
        const d = c.failure;
        out.push('  ---', `  message: ${yamlString(d.message)}`, `  at: ${yamlString(d.at)}`);
        if (d.expected !== undefined) out.push(`  expected: ${JSON.stringify(d.expected)}`);
        if (d.actual !== undefined) out.push(`  actual: ${JSON.stringify(d.actual)}`);
        out.push(`  path: ${JSON.stringify(d.path)}`, '  ...');
      }
    }
  for (const [file, problems] of byFile(run.problems)) {
    n++;
    out.push(
      `not ok ${n} - ${file}`,
      '  ---',
      `  message: ${yamlString(problems.map(problemLine).join('\n'))}`,
      '  ...',
    );
  }
  out.push(`1..${n}`, ...coverageLines(run).map((l) => `# ${l}`));
  return `${out.join('\n')}\n`;
}

const xml = (s: string): string =>
  s
    // Characters XML 1.0 cannot hold at all.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function junit(run: TestRun): string {
  const t = totals(run);
  const invalid = byFile(run.problems);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="wfx test" tests="${t.cases + invalid.size}" failures="${t.failed}" errors="${invalid.size}" time="${seconds(run.ms)}">`,
  ];
  for (const f of run.files) {
    const failed = f.cases.filter((c) => !c.ok).length;
    const ms = f.cases.reduce((sum, c) => sum + c.ms, 0);
    out.push(
      `  <testsuite name="${xml(f.file)}" tests="${f.cases.length}" failures="${failed}" errors="0" time="${seconds(ms)}">`,
    );
    for (const c of f.cases) {
      const open = `    <testcase name="${xml(c.name)}" classname="${xml(f.file)}" time="${seconds(c.ms)}"`;
      if (!c.failure) {
        out.push(`${open}/>`);
        continue;
      }
      out.push(
        `${open}>`,
        `      <failure message="${xml(c.failure.message)}" type="FlowTestFailure">${xml(failureLines(c.failure, '').join('\n'))}</failure>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  for (const [file, problems] of byFile(run.problems))
    out.push(
      `  <testsuite name="${xml(file)}" tests="1" failures="0" errors="1" time="0.000">`,
      `    <testcase name="${xml(file)}" classname="${xml(file)}" time="0.000">`,
      `      <error message="${xml(problems[0]!.message)}" type="TestFileInvalid">${xml(problems.map(problemLine).join('\n'))}</error>`,
      '    </testcase>',
      '  </testsuite>',
    );
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
