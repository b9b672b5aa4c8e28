import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { LogFile } from '../../../src/daemon/process/log-file.js';
import { eventually } from '../../helpers/eventually.js';

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-logfile-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('lines are held until a chunk fills, then written in order, whole, with multi-byte text intact', async (t) => {
  const path = join(await tempDir(t), 'daemon.log');
  const log = new LogFile(path, { chunkSize: 100, intervalMs: 60_000 });
  t.teardown(() => log.close());
  log.write('{"n":1,"msg":"é"}\n');
  t.equal(await readFile(path, 'utf8'), '', 'a line below the chunk size waits in memory');
  const lines = Array.from({ length: 20 }, (_, i) => `{"n":${i + 2},"msg":"ünïcødé ${'x'.repeat(i)}"}\n`);
  for (const line of lines) log.write(line);
  const written = await readFile(path, 'utf8');
  t.ok(written.length > 0, 'a full chunk is written at once');
  t.ok(written.endsWith('\n'), 'only whole lines are written');
  log.flush();
  t.equal(await readFile(path, 'utf8'), ['{"n":1,"msg":"é"}\n', ...lines].join(''), 'flush writes the rest, in order');
});

t.test('the file is created private and appended to, never truncated', async (t) => {
  const path = join(await tempDir(t), 'daemon.log');
  const first = new LogFile(path);
  first.write('one\n');
  first.close();
  const second = new LogFile(path);
  second.write('two\n');
  second.close();
  t.equal(await readFile(path, 'utf8'), 'one\ntwo\n');
  t.equal((await stat(path)).mode & 0o777, 0o600);
});

t.test('close writes what is held; lines after close are refused, not thrown', async (t) => {
  const path = join(await tempDir(t), 'daemon.log');
  const log = new LogFile(path, { intervalMs: 60_000 });
  t.equal(log.write('kept\n'), true);
  log.close();
  t.equal(log.write('late\n'), false, 'a line after close is refused');
  log.close();
  t.equal(await readFile(path, 'utf8'), 'kept\n');
});

t.test('a write that fails drops those lines, reports once, and never throws to the logger', async (t) => {
  const path = '/dev/full';
  const errors: Error[] = [];
  const log = new LogFile(path, { chunkSize: 10, intervalMs: 60_000, onError: (err) => errors.push(err) });
  t.teardown(() => log.close());
  t.doesNotThrow(() => {
    log.write('a line longer than ten\n');
    log.write('another line longer than ten\n');
  });
  t.equal(errors.length, 1, 'reported once');
  t.match(errors[0]?.message, /ENOSPC/);
  const throwing = new LogFile(path, {
    chunkSize: 10,
    intervalMs: 60_000,
    onError: () => {
      throw new Error('stderr is full too');
    },
  });
  t.teardown(() => throwing.close());
  t.doesNotThrow(() => throwing.write('a line longer than ten\n'), 'a report that fails does not throw either');
});

t.test('lines still held when the process dies of an uncaught exception are written on exit', async (t) => {
  const path = join(await tempDir(t), 'daemon.log');
  const module = new URL('../../../src/daemon/process/log-file.js', import.meta.url).href;
  const script = `import { LogFile } from ${JSON.stringify(module)};
const log = new LogFile(${JSON.stringify(path)}, { intervalMs: 60_000 });
log.write('before the crash\\n');
throw new Error('boom');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  t.not(run.status, 0, 'the process died');
  t.match(run.stderr, /boom/);
  t.equal(await readFile(path, 'utf8'), 'before the crash\n');
});

t.test('the timer writes held lines without a flush call', async (t) => {
  const path = join(await tempDir(t), 'daemon.log');
  const log = new LogFile(path, { intervalMs: 5 });
  t.teardown(() => log.close());
  log.write('by the timer\n');
  // The interval fires on its own: look at the file until it holds the line.
  await eventually('the timer wrote the line', async () => (await readFile(path, 'utf8')) !== '');
  t.equal(await readFile(path, 'utf8'), 'by the timer\n');
});
