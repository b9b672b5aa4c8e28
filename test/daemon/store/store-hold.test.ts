import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { AppendFile } from '../../../src/daemon/store/append-file.js';
import { readManifest } from '../../../src/daemon/store/manifest.js';
import { Store } from '../../../src/daemon/store/store.js';

type S = { n: number };
type R = { by: number };

function open(dir: string, checkpointEvery?: number) {
  return Store.open<S, R>({
    dir,
    initialState: () => ({ n: 0 }),
    apply: (s, r) => void (s.n += r.by),
    checkpointEvery,
  });
}

t.test('a hold checkpoints, then keeps every other checkpoint off until released while commits go on', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, 2);
  t.teardown(() => store.close({ checkpoint: false }));
  await store.commit({ by: 1 });
  await store.commit({ by: 2 });
  const hold = await store.hold();
  t.equal(hold.snapshot?.seq, store.lastSeq, 'the snapshot covers every commit made before the hold');
  t.equal(hold.snapshotPath, join(dir, 'snapshot.json'));
  t.same((await readManifest(dir))?.snapshot, hold.snapshot, 'the mark the manifest holds');
  t.same(
    hold.segments.map((s) => s.first),
    [hold.snapshot!.seq + 1],
    'the segment after the snapshot',
  );
  t.equal(hold.segments[0]!.bytes, 0, 'nothing durable in it yet');
  const snapshot = await readFile(hold.snapshotPath);

  // Far past checkpointEvery: without the hold these commits would checkpoint on their own.
  for (let i = 0; i < 20; i++) await store.commit({ by: 1 });
  let explicit = false;
  const asked = store.checkpoint().then(() => (explicit = true));
  await store.flush();
  t.same(await readFile(hold.snapshotPath), snapshot, 'the snapshot in place is kept');
  t.ok((await stat(hold.segments[0]!.path)).size > 0, 'the segment is kept and written to');
  t.notOk(explicit, 'an explicit checkpoint waits for the release');
  hold.release();
  await asked;
  t.not((await readManifest(dir))?.snapshot?.seq, hold.snapshot!.seq, 'then it runs');
  const again = await store.hold();
  t.equal(again.snapshot?.seq, store.lastSeq, 'a second hold after the first');
  again.release();
});

t.test('AppendFile.durableSize: whole synced batches, never a write in flight', async (t) => {
  const file = new AppendFile(join(t.testdir(), 'f'), 0, { preallocate: true });
  t.teardown(() => file.close());
  const first = file.append(Buffer.from('one\n'));
  t.equal(file.durableSize, 0, 'appended, not durable yet');
  await first.durable;
  t.equal(file.durableSize, 4);
  const second = file.append(Buffer.from('two\n'));
  t.equal(file.durableSize, 4, 'the next batch is not counted before its sync');
  await second.durable;
  t.equal(file.durableSize, 8);
  t.ok((await stat(file.path)).size > 8, 'the file holds zeros written ahead, not counted');
});
