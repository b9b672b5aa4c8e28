/**
 * `wfx/worker` as another program imports it: by the package's name, through package.json's
 * "exports" (here by self-reference, as Node resolves the name inside the package), to the
 * built worker and its declarations.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SPECIFIER = 'wfx/worker';

t.test('import("wfx/worker") loads the built worker through the package\'s exports', async (t) => {
  t.equal(fileURLToPath(import.meta.resolve(SPECIFIER)), join(ROOT, 'dist', 'src', 'worker', 'index.js'));
  // Through a variable: the test compiles before the declarations are emitted.
  const lib = (await import(SPECIFIER)) as typeof import('../../src/worker/index.js');
  t.type(lib.createWorker, 'function');
  t.type(lib.JobError, 'function');
  t.type(lib.commandHandler, 'function');
  t.type(lib.loadHandlers, 'function');
  const built = await import('../../src/worker/index.js');
  t.equal(lib.createWorker, built.createWorker, 'the one module, not a copy');
});

t.test('its declarations exist where "exports" says and type a program that uses it', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types: string; default: string }>;
  };
  t.equal(pkg.name, 'wfx');
  const declared = join(ROOT, pkg.exports['./worker']!.types);
  t.ok(existsSync(declared), `${pkg.exports['./worker']!.types} is built`);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  };
  // A program in the package's directory, so that the name resolves by self-reference.
  const consumer = join(ROOT, 'worker-consumer.mts');
  const resolved = ts.resolveModuleName(SPECIFIER, consumer, options, ts.sys).resolvedModule;
  t.equal(resolved?.resolvedFileName, declared, 'TypeScript finds the declarations through "exports"');
  const check = (source: string): string[] => {
    const host = ts.createCompilerHost(options);
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (file, version, ...rest) =>
      file === consumer ? ts.createSourceFile(file, source, version) : read(file, version, ...rest);
    host.fileExists = (file) => file === consumer || ts.sys.fileExists(file);
    const program = ts.createProgram([consumer], options, host);
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  };
  t.same(
    check(`import { createWorker, JobError, type WorkerOptions } from 'wfx/worker';
const options: WorkerOptions = {
  url: 'http://127.0.0.1:7878',
  apiKey: 'apk_x',
  domain: 'billing',
  reconnect: { initialMs: 100 },
  handlers: { charge: (input, job) => ({ receipt: String(input.amount) + job.key }) },
};
const worker = createWorker(options);
const stopped: Promise<void> = worker.stop({ now: true });
const error: Error = new JobError('CARD_DECLINED', 'declined', { retry: false });
export { stopped, error };
`),
    [],
    'a program using createWorker, its options and JobError type-checks',
  );
  t.match(
    check(`import { createWorker } from 'wfx/worker';\ncreateWorker({ url: 'x' });\n`),
    [/apiKey|domain|handlers/],
    'and a wrong use does not: the declarations carry the types',
  );
});
