#!/usr/bin/env node
// Fails (exit 1, listing file:line) when a comment in src/ carries a benchmark figure (a number
// followed by ms, µs, ns, MB, KB, GB or ops/s) or cites docs/performance.md. Figures rot in
// comments; the why goes in a line that cites a decision record (docs/decisions/NNN-title.md).
// Text in backticks is code and is not checked (`500ms` as a duration's syntax). A limit or
// default that is a fact of the code, not a measurement, may stay: end that comment line with
// `check-comments: allow`. No dependencies: run as `node scripts/check-comments.mjs [dir...]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const FIGURE = /\d(?:[\d,.]*\d)?\s?(?:ms|µs|us|ns|MB|KB|GB|ops\/s)(?![A-Za-z0-9])/;
const CITES_PERFORMANCE = /performance\.md/;
const ALLOW = 'check-comments: allow';
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;

/** Every source file under dir, depth first, in name order. */
function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

/**
 * The comment text of each line of a source file, by line number (1-based). A small scanner:
 * it follows string and template literals so that `//` or `/*` inside them is not taken for a
 * comment, and regular expression literals (a `/` where an operand is expected) so that quotes
 * in them are not taken for strings. A regular expression after a keyword (`return /x/`) or JSX
 * text with an apostrophe is misread, but only to the end of its line.
 */
function commentsByLine(text) {
  const comments = new Map();
  const add = (line, s) => comments.set(line, (comments.get(line) ?? '') + s);
  let line = 1;
  let i = 0;
  let mode = 'code'; // code | line | block | regex | ' | " | `
  let start = 0;
  let inClass = false; // inside [...] of a regular expression literal
  let last = ''; // the last character of code that is not white space
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '\n') {
      if (mode === 'line' || mode === 'block') add(line, text.slice(start, i));
      // A line comment ends here; a regular expression or a quoted string never spans lines, so
      // one still open was misread: start the next line as code.
      if (mode === 'line' || mode === 'regex' || mode === "'" || mode === '"') mode = 'code';
      inClass = false;
      line++;
      i++;
      start = i;
      continue;
    }
    if (mode === 'code') {
      if (c === '/' && next === '/') {
        mode = 'line';
        start = i + 2;
        i += 2;
        continue;
      }
      if (c === '/' && next === '*') {
        mode = 'block';
        start = i + 2;
        i += 2;
        continue;
      }
      if (c === "'" || c === '"' || c === '`') mode = c;
      else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last))) mode = 'regex';
      if (!/\s/.test(c)) last = c;
      i++;
    } else if (mode === 'regex') {
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) {
        mode = 'code';
        last = 'x';
      }
      i++;
    } else if (mode === 'block') {
      if (c === '*' && next === '/') {
        add(line, text.slice(start, i));
        mode = 'code';
        i += 2;
        continue;
      }
      i++;
    } else if (mode === 'line') {
      i++;
    } else {
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === mode) {
        mode = 'code';
        last = c;
      }
      i++;
    }
  }
  if (mode === 'line' || mode === 'block') add(line, text.slice(start));
  return comments;
}

const roots = process.argv.slice(2);
const findings = [];
for (const root of roots.length > 0 ? roots : ['src']) {
  for (const file of sourceFiles(root)) {
    for (const [line, comment] of commentsByLine(readFileSync(file, 'utf8'))) {
      if (comment.includes(ALLOW)) continue;
      const prose = comment.replace(/`[^`]*`/g, '');
      if (FIGURE.test(prose) || CITES_PERFORMANCE.test(comment)) {
        findings.push(`${relative(process.cwd(), file)}:${line}: ${comment.trim()}`);
      }
    }
  }
}
if (findings.length > 0) {
  console.error('Comments with benchmark figures (cite a docs/decisions/ record instead):');
  for (const f of findings) console.error(`  ${f}`);
  process.exit(1);
}
console.log('comments: no benchmark figures in src/ comments');
