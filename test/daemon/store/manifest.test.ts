import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { adoptDataDir, checkDataDir, cutDamagedTail } from '../../../src/daemon/ops/check.js';
import { encodeManifest, readManifest } from '../../../src/daemon/store/manifest.js';
import { Store } from '../../../src/daemon/store/store.js';

interface S {
  n: number;
}
type R = { op: 'add'; by: number };

function open(dir: string, warnings: object[] = []) {
  return Store.open<S, R>({
    dir,
    initialState: () => ({ n: 0 }),
    apply: (s, r) => {
      s.n += r.by;
    },
    logger: { info() {}, error() {}, warn: (obj) => warnings.push(obj) },
  });
}

/** A directory with a snapshot at seq 3 and 23 entries after it in the journal, as after a kill -9. */
async function killedWithJournal(dir: string): Promise<string> {
  const store = await open(dir);
  for (let i = 0; i < 3; i++) await store.commit({ op: 'add', by: 1 });
  await store.checkpoint();
  for (let i = 0; i < 23; i++) await store.commit({ op: 'add', by: 1 });
  await store.close({ checkpoint: false });
  const names = await readdir(join(dir, 'journal'));
  if (names.length !== 1) throw new Error(`one live segment expected, found ${names.join(', ')}`);
  return join(dir, 'journal', names[0]!);
}

t.test(
  'a snapshot deleted after a clean stop is refused, naming it; nothing is written over the old data',
  async (t) => {
    const dir = t.testdir();
    const store = await open(dir);
    await store.commit({ op: 'add', by: 5 });
    await store.close();
    const snapshot = join(dir, 'snapshot.json');
    await rm(snapshot);
    const before = await readdir(dir);
    await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED', details: { file: snapshot } });
    t.same(await readdir(dir), before, 'no new snapshot, no manifest rewritten away');
    await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED' }, 'refused again: the refusal changed nothing');
    t.match(await checkDataDir(dir), [{ code: 'DATA_DIR_DAMAGED', file: snapshot }], 'check names it');
  },
);

t.test('a journal segment deleted after a kill is refused, naming it', async (t) => {
  const dir = t.testdir();
  const segment = await killedWithJournal(dir);
  await rm(segment);
  await t.rejects(open(dir), { code: 'JOURNAL_CORRUPT', details: { file: segment } });
  t.match(await checkDataDir(dir), [{ code: 'JOURNAL_CORRUPT', file: segment }]);
});

t.test('a snapshot edited into other valid JSON is SNAPSHOT_CORRUPT', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 5 });
  await store.close();
  const snapshot = join(dir, 'snapshot.json');
  const edited = (await readFile(snapshot, 'utf8')).replace('"n":5', '"n":7');
  t.not(edited, await readFile(snapshot, 'utf8'));
  await writeFile(snapshot, edited);
  await t.rejects(open(dir), { code: 'SNAPSHOT_CORRUPT', details: { file: snapshot } });
  t.match(await checkDataDir(dir), [{ code: 'SNAPSHOT_CORRUPT', file: snapshot }]);
});

t.test(
  'a flipped bit in the last journal record, its line whole, is corruption with its offset, not a torn tail',
  async (t) => {
    const dir = t.testdir();
    const segment = await killedWithJournal(dir);
    const bytes = await readFile(segment);
    const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    bytes[bytes.length - 3]! ^= 0x01; // inside the JSON of the last frame; its LF stays
    await writeFile(segment, Buffer.concat([bytes, Buffer.alloc(4096)])); // zeros written ahead after it
    const warnings: object[] = [];
    await t.rejects(open(dir, warnings), { code: 'JOURNAL_CORRUPT', details: { file: segment, offset: lastLine } });
    t.same(warnings, [], 'nothing cut');
    t.equal((await readFile(segment)).length, bytes.length + 4096, 'the segment is left as it was');
    t.match(await checkDataDir(dir), [{ code: 'JOURNAL_CORRUPT', file: segment, offset: lastLine }]);
  },
);

t.test('a torn last write (its line cut short, zeros after) is still cut with a warning', async (t) => {
  const dir = t.testdir();
  const segment = await killedWithJournal(dir);
  const bytes = await readFile(segment);
  bytes.fill(0, bytes.length - 5); // the write's last sector never landed: zeros, its LF too
  await writeFile(segment, bytes);
  const warnings: object[] = [];
  const store = await open(dir, warnings);
  t.equal(store.state.n, 25, 'all but the torn entry');
  t.equal(warnings.length, 1);
  await store.close();
  t.same(await checkDataDir(dir), []);
});

t.test('a duplicated journal line is reported as a duplicate of its entry', async (t) => {
  const dir = t.testdir();
  const segment = await killedWithJournal(dir);
  const text = await readFile(segment, 'utf8');
  const lines = text.split('\n');
  lines.splice(5, 0, lines[4]!);
  await writeFile(segment, lines.join('\n'));
  const second = Buffer.byteLength(lines.slice(0, 5).join('\n')) + 1;
  const seq = Number(lines[4]!.split(' ')[1]);
  await t.rejects(open(dir), {
    code: 'JOURNAL_CORRUPT',
    details: { file: segment, offset: second, duplicateOfSeq: seq },
  });
  t.match(await checkDataDir(dir), [{ code: 'JOURNAL_CORRUPT', file: segment, offset: second }]);
});

t.test(
  'a directory without a manifest beside a snapshot and a journal is refused, by a start and the check, until adopted',
  async (t) => {
    const dir = t.testdir();
    await killedWithJournal(dir);
    const manifest = join(dir, 'store.manifest');
    await rm(manifest);
    const before = await readdir(dir);
    await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED', details: { file: manifest } });
    t.same(await readdir(dir), before, 'nothing written: no manifest made up for it');
    const findings = await checkDataDir(dir);
    t.match(findings, [{ code: 'DATA_DIR_DAMAGED', file: manifest }]);
    t.equal(findings.length, 1, 'the rest checks out');
    // A directory a wfx from before manifests wrote: adopted by hand (wfx daemon check --adopt).
    t.match(await adoptDataDir(dir, findings), { format: 1, snapshot: { seq: 3 }, pending: null });
    t.same(await checkDataDir(dir), []);
    const store = await open(dir);
    t.equal(store.state.n, 26);
    await store.close();
    const again = await open(dir);
    t.equal(again.state.n, 26);
    await again.close();
  },
);

t.test('a copy cut short without its manifest (a backup a crash interrupted) is refused, not cut', async (t) => {
  // What SIGKILL during an old backup left: the snapshot, part of the journal's last segment.
  const dir = t.testdir();
  const segment = await killedWithJournal(dir);
  await rm(join(dir, 'store.manifest'));
  const bytes = await readFile(segment);
  const cut = bytes.indexOf(0x0a, Math.floor(bytes.length / 2)) - 7; // inside a line
  await writeFile(segment, bytes.subarray(0, cut));
  const warnings: object[] = [];
  await t.rejects(open(dir, warnings), { code: 'DATA_DIR_DAMAGED', details: { file: join(dir, 'store.manifest') } });
  t.same(warnings, [], 'no torn tail cut with a warning');
  t.equal((await readFile(segment)).length, cut, 'the segment is left as it is');
  t.match(await checkDataDir(dir), [{ code: 'DATA_DIR_DAMAGED' }], 'the check is not ok');
  // Without the snapshot: the journal alone shows a store was there.
  await rm(join(dir, 'snapshot.json'));
  await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED', details: { found: segment } });
  // With the snapshot alone (the kill before the journal's copy).
  await rm(join(dir, 'journal'), { recursive: true });
  await writeFile(join(dir, 'snapshot.json'), '{"format":1,"seq":3,"savedAt":"x","state":{"n":3}}');
  await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED', details: { found: join(dir, 'snapshot.json') } });
  t.equal(await adoptDataDir(dir, []), null, 'adopting wants the finding');
});

t.test(
  'a directory whose first start stopped before its manifest (an empty segment, or zeros) opens as new',
  async (t) => {
    const dir = t.testdir();
    await mkdir(join(dir, 'journal'));
    await writeFile(join(dir, 'journal', '00000000000000000001.wal'), Buffer.alloc(4096));
    t.same(await checkDataDir(dir), []);
    const store = await open(dir);
    await store.commit({ op: 'add', by: 2 });
    await store.close();
    t.equal((await open(dir)).state.n, 2);
  },
);

t.test(
  "a journal that ends before the manifest's lastSeq is refused, naming where it ends; accepting the loss opens it",
  async (t) => {
    const dir = t.testdir();
    const segment = await killedWithJournal(dir);
    const manifest = (await readManifest(dir))!;
    // A backup's manifest: the copy holds entries up to 26. Its last segment cut inside a line,
    // as a torn write would be, and then at a line's end.
    await writeFile(join(dir, 'store.manifest'), encodeManifest({ ...manifest, lastSeq: 26 }));
    const bytes = await readFile(segment);
    const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    await writeFile(segment, bytes.subarray(0, lastLine + 5));
    const warnings: object[] = [];
    await t.rejects(open(dir, warnings), {
      code: 'JOURNAL_CORRUPT',
      details: { file: segment, offset: lastLine, expectedSeq: 26, throughSeq: 26 },
    });
    t.same(warnings, [], 'not cut as a torn write');
    t.equal((await readFile(segment)).length, lastLine + 5, 'nothing cut');
    await writeFile(segment, bytes.subarray(0, lastLine));
    const findings = await checkDataDir(dir);
    t.match(findings, [{ code: 'JOURNAL_CORRUPT', file: segment, offset: lastLine }]);
    const loss = await cutDamagedTail(dir, findings);
    t.same(loss, { file: segment, offset: lastLine, bytes: 0, lastKeptSeq: 25 });
    t.equal((await readManifest(dir))!.lastSeq, undefined, 'the loss accepted, the manifest no longer says 26');
    t.same(await checkDataDir(dir), []);
    const store = await open(dir);
    t.equal(store.state.n, 25);
    await store.close();
  },
);

t.test('a manifest whose lastSeq the journal reaches opens, and the store drops it', async (t) => {
  const dir = t.testdir();
  await killedWithJournal(dir);
  const manifest = (await readManifest(dir))!;
  await writeFile(join(dir, 'store.manifest'), encodeManifest({ ...manifest, lastSeq: 26 }));
  t.same(await checkDataDir(dir), []);
  const store = await open(dir);
  t.equal(store.state.n, 26);
  t.equal((await readManifest(dir))!.lastSeq, undefined, "the store's own manifest: its journal grows");
  await store.close();
  await writeFile(join(dir, 'store.manifest'), encodeManifest({ ...manifest, lastSeq: -1 }));
  await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED' }, 'a lastSeq that is not a sequence number');
});

t.test(
  'a directory that lost its manifest and snapshot after a clean stop is refused: its journal starts after entry 1',
  async (t) => {
    const dir = t.testdir();
    const store = await open(dir);
    await store.commit({ op: 'add', by: 5 });
    await store.close();
    await rm(join(dir, 'store.manifest'), { force: true });
    await rm(join(dir, 'snapshot.json'));
    await t.rejects(open(dir), { code: 'JOURNAL_CORRUPT' });
  },
);

t.test(
  'a new directory is initialized: a manifest with no snapshot, its first segment listed and on disk',
  async (t) => {
    const dir = t.testdir();
    const store = await open(dir);
    const manifest = await readManifest(dir);
    t.same(manifest, { format: 1, snapshot: null, pending: null, segments: [1] });
    t.same(await readdir(join(dir, 'journal')), ['00000000000000000001.wal']);
    await store.close();
    t.same(await checkDataDir(dir), [], 'a clean directory has no findings');
  },
);

t.test('a damaged manifest is refused, naming it', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 5 });
  await store.close();
  const path = join(dir, 'store.manifest');
  const text = await readFile(path, 'utf8');
  await writeFile(path, text.replace('"format":1', '"format":2'));
  await t.rejects(open(dir), { code: 'DATA_DIR_DAMAGED', details: { file: path } });
  t.match(await checkDataDir(dir), [{ code: 'DATA_DIR_DAMAGED', file: path }]);
});

t.test('a checkpoint that crashed after its snapshot took the name, before the manifest named it, opens', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 5 });
  await store.checkpoint();
  const old = (await readManifest(dir))!;
  await store.commit({ op: 'add', by: 2 });
  await store.checkpoint();
  const current = (await readManifest(dir))!;
  await store.close({ checkpoint: false });
  // The manifest as the crash left it: the old snapshot named, the new one pending, both segments listed.
  await writeFile(
    join(dir, 'store.manifest'),
    encodeManifest({ ...old, pending: current.snapshot, segments: [...old.segments, ...current.segments] }),
  );
  const again = await open(dir);
  t.equal(again.state.n, 7);
  t.same((await readManifest(dir))!.snapshot, current.snapshot, 'the manifest names the snapshot in place');
  await again.close();
  // Before the rename: the old snapshot in place, the new one pending; the old one still checks.
  await writeFile(
    join(dir, 'store.manifest'),
    encodeManifest({ ...current, pending: { seq: 99, bytes: 1, crc32: 1 } }),
  );
  const third = await open(dir);
  t.equal(third.state.n, 7);
  await third.close();
});

t.test(
  'accepting the loss cuts a damaged tail of the last segment, saying from where; nothing else is cut',
  async (t) => {
    const dir = t.testdir();
    const segment = await killedWithJournal(dir);
    const bytes = await readFile(segment);
    const lastLine = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    bytes[bytes.length - 3]! ^= 0x01;
    await writeFile(segment, bytes);
    const snapshot = join(dir, 'snapshot.json');
    const goodSnapshot = await readFile(snapshot);
    await writeFile(snapshot, Buffer.concat([goodSnapshot, Buffer.from(' ')]));
    t.equal(await cutDamagedTail(dir, await checkDataDir(dir)), null, 'not with a damaged snapshot besides');
    t.equal((await readFile(segment)).length, bytes.length, 'nothing cut');
    await writeFile(snapshot, goodSnapshot);
    const loss = await cutDamagedTail(dir, await checkDataDir(dir));
    t.same(loss, { file: segment, offset: lastLine, bytes: bytes.length - lastLine, lastKeptSeq: 25 });
    t.same(await checkDataDir(dir), [], 'clean after the cut');
    const store = await open(dir);
    t.equal(store.state.n, 25, 'every entry up to the cut');
    await store.close();
  },
);
