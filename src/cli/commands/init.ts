import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { flowSchema } from '../../shared/flow/schema.js';
import { WfxError } from '../../shared/errors.js';
import { globals, printJson, type CliContext } from '../context.js';

/** Where `wfx init` puts the flow format's JSON Schema, for editors (relative to the project). */
const SCHEMA_FILE = join('schemas', 'flow.schema.json');

/**
 * A first flow: it runs at once with `wfx run FILE --wait` (its input has a default) and shows
 * inputs, a variable reference and an output. `schemaFrom`: the schema's path relative to the
 * flow file, for the yaml-language-server modeline (completion and checks in editors).
 */
export function flowTemplate(name: string, schemaFrom: string | null): string {
  return [
    ...(schemaFrom ? [`# yaml-language-server: $schema=${schemaFrom}`] : []),
    `processId: ${randomUUID()}   # stable across versions: keep it when you change the flow`,
    `name: ${JSON.stringify(name)}`,
    'inputs:',
    '  type: object',
    '  properties:',
    '    who: { type: string, default: world, description: Whom to greet }',
    'nodes:',
    '  start: { type: startEvent, next: greet }',
    '  greet: { type: outputNode, outputs: { greeting: "Hello, {who}!" }, next: done }',
    '  done: { type: endEvent }',
    '',
  ].join('\n');
}

/** The cases of the first flow (flowTemplate), which `wfx test` runs: what a test file looks like. */
export const FIRST_FLOW_TESTS = [
  '# The cases of hello.yaml: `wfx test` runs them in-process, no daemon needed (docs/testing.md).',
  'flow: hello.yaml',
  'cases:',
  '  - name: greets the world when told no one',
  '    expect: { state: COMPLETED, variables: { greeting: "Hello, world!" } }',
  '  - name: greets whom it is told',
  '    start: { data: { who: Ada } }',
  '    expect: { state: COMPLETED, path: [start, greet, done], variables: { greeting: "Hello, Ada!" } }',
  '',
].join('\n');

/** A file name for a flow called `name`: lower case, words joined by hyphens. */
export function flowFileName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${slug || 'flow'}.yaml`;
}

/** Writes `text` to `file` unless it exists (FILE_EXISTS). */
async function create(file: string, text: string): Promise<void> {
  if (existsSync(file)) throw new WfxError('FILE_EXISTS', `${file} exists; wfx never overwrites it`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text, { flag: 'wx' });
}

/** `wfx init` and `wfx flow new`: a project's first files. */
export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(
      "start a wfx project here: flows/ with a first flow and its tests, the flow format's schema for editors, .wfx/ in .gitignore",
    )
    .addHelpText(
      'after',
      '\nFiles that exist are kept (nothing is overwritten); running it again adds what is missing.\n\nExample:\n  $ wfx init && wfx dev',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const at = (p: string) => resolve(ctx.cwd, p);
      const done: Array<{ file: string; created: boolean; what: string }> = [];
      const schema = `${JSON.stringify(flowSchema(), null, 2)}\n`;
      const schemaCreated = !existsSync(at(SCHEMA_FILE));
      if (schemaCreated) await create(at(SCHEMA_FILE), schema);
      done.push({ file: SCHEMA_FILE, created: schemaCreated, what: "the flow format's JSON Schema, for editors" });
      const first = join('flows', 'hello.yaml');
      const flowCreated = !existsSync(at(first));
      if (flowCreated) await create(at(first), flowTemplate('Hello', relative('flows', SCHEMA_FILE)));
      done.push({ file: first, created: flowCreated, what: 'a first flow' });
      const tests = join('flows', 'hello.test.yaml');
      // Its cases only beside the template's own flow (an edited hello.yaml keeps its own tests).
      const testsCreated = flowCreated && !existsSync(at(tests));
      if (testsCreated) await create(at(tests), FIRST_FLOW_TESTS);
      if (testsCreated || existsSync(at(tests)))
        done.push({ file: tests, created: testsCreated, what: "the first flow's test cases" });
      const ignore = at('.gitignore');
      const ignored = existsSync(ignore) ? await readFile(ignore, 'utf8') : '';
      const listed = ignored.split('\n').some((l) => ['.wfx', '.wfx/', '/.wfx', '/.wfx/'].includes(l.trim()));
      if (!listed) await writeFile(ignore, `${ignored}${ignored === '' || ignored.endsWith('\n') ? '' : '\n'}.wfx/\n`);
      done.push({ file: '.gitignore', created: !listed, what: '.wfx/ (the data directory) left out of git' });
      if (globals(cmd).json) return printJson(ctx, done);
      for (const d of done) ctx.stdout.write(`${d.created ? 'created' : 'kept   '}  ${d.file}  (${d.what})\n`);
      ctx.stdout.write(
        "\nnext:\n  wfx test                           # run the first flow's cases, no daemon needed\n" +
          '  wfx dev                            # a daemon that publishes flows/ to DEVELOPMENT on each change\n' +
          '  wfx run flows/hello.yaml --wait    # in another terminal: run the first flow\n',
      );
    });
}

/** `wfx flow new NAME`: registered by the flow command. */
export function registerFlowNew(flow: Command, ctx: CliContext): void {
  flow
    .command('new')
    .description('a new flow file from a template, with a fresh processId')
    .argument('<name>', "the flow's name")
    .option('--dir <dir>', 'where to write it', 'flows')
    .addHelpText('after', '\nExample:\n  $ wfx flow new "Order approval"   # flows/order-approval.yaml')
    .action(async (name: string, opts: { dir: string }, cmd: Command) => {
      const file = join(opts.dir, flowFileName(name));
      const schema = resolve(ctx.cwd, SCHEMA_FILE);
      const modeline = existsSync(schema) ? relative(resolve(ctx.cwd, opts.dir), schema) : null;
      const text = flowTemplate(name, modeline);
      await create(resolve(ctx.cwd, file), text);
      const processId = /^processId: (\S+)/m.exec(text)![1]!;
      if (globals(cmd).json) return printJson(ctx, { file, processId, name });
      ctx.stdout.write(`created ${file} (${name}, processId ${processId})\n`);
    });
}
