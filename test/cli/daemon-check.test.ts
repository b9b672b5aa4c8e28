import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { History } from '../../src/daemon/store/history.js';
import { killIfAlive, wfxIn } from '../helpers/cli.js';

async function startStop(t: { teardown(fn: () => void): void }, dataDir: string): Promise<void> {
  const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
  if (res.code !== 0) throw new Error(`daemon start failed (${res.code}): ${res.stderr}`);
  const { pid } = JSON.parse(res.stdout) as { pid: number };
  t.teardown(() => killIfAlive(pid));
  const stop = await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
  if (stop.code !== 0) throw new Error(`daemon stop failed (${stop.code}): ${stop.stderr}`);
}

t.test('data directories a daemon wrote, damaged', async (t) => {
  // What a daemon leaves when started on a new directory and stopped, made once: each test damages
  // a copy of its own.
  const pristine = join(t.testdir(), 'pristine');
  await startStop(t, pristine);
  const copyOfPristine = async (t: Test): Promise<string> => {
    const dataDir = join(t.testdir(), 'data');
    await cp(pristine, dataDir, { recursive: true });
    return dataDir;
  };

  await t.test(
    'a start over a data directory that lost its snapshot is refused, bootstrap.key untouched',
    async (t) => {
      const dataDir = await copyOfPristine(t);
      const key = await readFile(join(dataDir, 'bootstrap.key'), 'utf8');
      await rm(join(dataDir, 'snapshot.json'));
      const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
      if (res.code === 0) t.teardown(() => killIfAlive((JSON.parse(res.stdout) as { pid: number }).pid));
      t.equal(res.code, 1, 'refused');
      t.match(res.stderr, /DATA_DIR_DAMAGED/);
      t.match(res.stderr, /snapshot\.json/, 'the file is named');
      t.equal(await readFile(join(dataDir, 'bootstrap.key'), 'utf8'), key, 'bootstrap.key untouched');
      t.notOk((await readdir(dataDir)).includes('snapshot.json'), 'no empty snapshot written in its place');
    },
  );

  await t.test(
    'a start over history whose snapshot, manifest and journal are all gone is refused, bootstrap.key untouched',
    async (t) => {
      const dataDir = await copyOfPristine(t);
      const history = await History.open(join(dataDir, 'history'));
      await history.put('2026-11-20', 'finished-execution', { stateCd: 1 });
      await history.close();
      const key = await readFile(join(dataDir, 'bootstrap.key'), 'utf8');
      await rm(join(dataDir, 'snapshot.json'));
      await rm(join(dataDir, 'store.manifest'));
      await rm(join(dataDir, 'journal'), { recursive: true });
      const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
      if (res.code === 0) t.teardown(() => killIfAlive((JSON.parse(res.stdout) as { pid: number }).pid));
      t.equal(res.code, 1, 'refused');
      t.match(res.stderr, /DATA_DIR_DAMAGED/);
      t.match(res.stderr, /history/, 'the history directory is named');
      t.equal(await readFile(join(dataDir, 'bootstrap.key'), 'utf8'), key, 'bootstrap.key untouched');
    },
  );

  await t.test(
    'wfx daemon check: exit 0 on a clean directory, 1 with every finding named on a damaged one',
    async (t) => {
      const dataDir = await copyOfPristine(t);
      const clean = await wfxIn(['daemon', 'check', '--data-dir', dataDir, '--json']);
      t.equal(clean.code, 0, clean.stderr);
      t.same(JSON.parse(clean.stdout), { dataDir, ok: true, findings: [] });
      const human = await wfxIn(['daemon', 'check', '--data-dir', dataDir]);
      t.equal(human.code, 0);

      const snapshot = join(dataDir, 'snapshot.json');
      // A byte more in the snapshot: its size and CRC-32 no longer match the manifest's.
      const text0 = await readFile(snapshot, 'utf8');
      t.match(text0, /"format":\d/, 'a snapshot to damage');
      await writeFile(snapshot, text0.replace(/"format":(\d)/, '"format":$1 '));
      const segment = join(dataDir, 'journal', (await readdir(join(dataDir, 'journal')))[0]!);
      await writeFile(segment, `00000000 5 5 {}\n`);
      const before = await readFile(segment);
      const damaged = await wfxIn(['daemon', 'check', '--data-dir', dataDir, '--json']);
      t.equal(damaged.code, 1);
      const report = JSON.parse(damaged.stdout) as {
        ok: boolean;
        findings: Array<{ code: string; file: string; offset?: number }>;
      };
      t.equal(report.ok, false);
      t.match(report.findings, [
        { code: 'SNAPSHOT_CORRUPT', file: snapshot },
        { code: 'JOURNAL_CORRUPT', file: segment, offset: 0 },
      ]);
      t.same(await readFile(segment), before, 'check changed nothing');
      const text = await wfxIn(['daemon', 'check', '--data-dir', dataDir]);
      t.equal(text.code, 1);
      t.match(text.stdout, /^SNAPSHOT_CORRUPT: .*snapshot\.json/m);
      t.match(text.stdout, /^JOURNAL_CORRUPT: .*\.wal at byte 0/m);
    },
  );

  await t.test('wfx daemon check refuses a directory a live daemon holds', async (t) => {
    const dataDir = join(t.testdir(), 'data');
    const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
    t.equal(res.code, 0, res.stderr);
    const { pid } = JSON.parse(res.stdout) as { pid: number };
    t.teardown(() => killIfAlive(pid));
    const check = await wfxIn(['daemon', 'check', '--data-dir', dataDir]);
    t.equal(check.code, 1);
    t.match(check.stderr, /^DATA_DIR_LOCKED: /);
    await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
  });

  await t.test(
    'a directory that lost its manifest is refused by a start and the check; --adopt writes one, and it starts',
    async (t) => {
      const dataDir = await copyOfPristine(t);
      const manifest = join(dataDir, 'store.manifest');
      await rm(manifest);
      const start = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
      if (start.code === 0) t.teardown(() => killIfAlive((JSON.parse(start.stdout) as { pid: number }).pid));
      t.equal(start.code, 1, 'refused');
      t.match(start.stderr, /^DATA_DIR_DAMAGED: .*store\.manifest is missing/);
      const check = await wfxIn(['daemon', 'check', '--data-dir', dataDir, '--json']);
      t.equal(check.code, 1);
      t.match(JSON.parse(check.stdout), { ok: false, findings: [{ code: 'DATA_DIR_DAMAGED', file: manifest }] });
      const adopt = await wfxIn(['daemon', 'check', '--adopt', '--data-dir', dataDir, '--json']);
      t.equal(adopt.code, 0, adopt.stderr);
      t.same(JSON.parse(adopt.stdout), { dataDir, ok: true, findings: [], adopted: true });
      t.equal(adopt.stderr, `wrote ${manifest} for what the directory holds\n`);
      await startStop(t, dataDir);
      const again = await wfxIn(['daemon', 'check', '--adopt', '--data-dir', dataDir, '--json']);
      t.same(JSON.parse(again.stdout), { dataDir, ok: true, findings: [] }, 'nothing to adopt: nothing written');
    },
  );
});
