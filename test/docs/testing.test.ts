/**
 * The worked examples of docs/testing.md run as written: each section's ```yaml file=NAME blocks
 * are written to a folder of their own, each ```console block's `$ wfx ...` line runs there, and
 * what it prints must be what the block shows (times in milliseconds aside).
 */
import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { wfxIn } from '../helpers/cli.js';

const DOC = fileURLToPath(new URL('../../../docs/testing.md', import.meta.url));

interface Section {
  readonly title: string;
  readonly files: Record<string, string>;
  readonly runs: Array<{ line: number; args: string[]; output: string }>;
}

function sections(): Section[] {
  const lines = readFileSync(DOC, 'utf8').split('\n');
  const out: Section[] = [];
  let current: Section = { title: '(top)', files: {}, runs: [] };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,4} /.test(line)) {
      out.push(current);
      current = { title: line.replace(/^#+ /, ''), files: {}, runs: [] };
      continue;
    }
    const file = /^```yaml file=(\S+)$/.exec(line);
    const console = line === '```console';
    if (!file && !console) continue;
    let j = i + 1;
    while (j < lines.length && lines[j] !== '```') j++;
    const body = lines.slice(i + 1, j);
    if (file) current.files[file[1]!] = `${body.join('\n')}\n`;
    else {
      const command = body[0]!;
      if (!command.startsWith('$ wfx ')) throw new Error(`docs/testing.md:${i + 2}: a console block starts with "$ wfx "`);
      current.runs.push({ line: i + 2, args: command.slice('$ wfx '.length).split(' '), output: `${body.slice(1).join('\n')}\n` });
    }
    i = j;
  }
  out.push(current);
  return out;
}

/** Times vary from run to run: `(3 ms)` and `, 9 ms)` read the same. */
const timeless = (text: string): string => text.replace(/\d+ ms\)/g, 'N ms)');

t.test('the worked examples of docs/testing.md print what the doc shows', async (t) => {
  const all = sections().filter((s) => s.runs.length > 0);
  t.ok(all.length >= 4, 'the doc has its worked examples');
  for (const s of all)
    await t.test(s.title, async (t) => {
      const cwd = t.testdir(s.files);
      for (const run of s.runs) {
        const r = await wfxIn(run.args, { cwd });
        t.equal(timeless(r.stdout + r.stderr), timeless(run.output), `docs/testing.md:${run.line}`);
      }
    });
});
