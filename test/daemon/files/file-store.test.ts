import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createHash } from 'node:crypto';
import { bucketOf } from '../../../src/daemon/state/ids.js';
import { FileStore, referencedFiles } from '../../../src/daemon/files/file-store.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { initialState, STATE, type Execution } from '../../../src/daemon/state/state.js';
import { engineHarness } from '../../helpers/engine.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

t.test('put: the blob is named by its hash, durable before its record; the same content shares a blob', async (t) => {
  const h = await engineHarness(t);
  const a = await h.files.put({
    organization: 'default',
    name: 'a.txt',
    mimeType: 'text/plain',
    content: Buffer.from('hello'),
  });
  const b = await h.files.put({
    organization: 'acme',
    name: 'b.txt',
    mimeType: 'text/plain',
    content: Buffer.from('hello'),
  });
  t.match(a, { name: 'a.txt', mimeType: 'text/plain', bytes: 5, sha256: sha('hello'), organization: 'default' });
  t.match(a.fileId, /^file_[0-9a-f]{32}$/);
  t.not(a.fileId, b.fileId, 'two files');
  t.equal(a.sha256, b.sha256, 'one blob');
  t.equal(readFileSync(h.files.blobPath(a.sha256), 'utf8'), 'hello');
  t.same(readdirSync(h.files.tmpDir), [], 'nothing left in tmp');
  t.equal(a.expiresAt, new Date(Date.parse(a.createdAt) + 7 * DAY).toISOString(), 'kept for the retention');
  const restarted = await h.restart();
  t.same(restarted.store.state.files[a.fileId], a, 'the record survives a restart');
  t.equal((await restarted.files.readAll(a)).toString(), 'hello');
});

t.test('an upload over the limit is PAYLOAD_TOO_LARGE and leaves nothing behind', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { maxFileBytes: 10 });
  async function* chunks() {
    yield Buffer.from('0123456');
    yield Buffer.from('789abc');
  }
  await t.rejects(h.files.put({ organization: 'default', name: 'big', mimeType: 'text/plain', content: chunks() }), {
    code: 'PAYLOAD_TOO_LARGE',
  });
  t.same(h.store.state.files, {}, 'no record');
  t.same(readdirSync(h.files.tmpDir), [], 'no temporary file');
});

t.test('sweep: expired files go unless a running execution names them; orphaned blobs go once old', async (t) => {
  const h = await engineHarness(t);
  const put = (name: string, text: string) =>
    h.files.put({ organization: 'default', name, mimeType: 'text/plain', content: Buffer.from(text) });
  const old = await put('old.txt', 'old');
  const used = await put('used.txt', 'used');
  const shared = await put('shared-1.txt', 'same');
  const sharedToo = await put('shared-2.txt', 'same');
  const pid = await h.publish(`processId: AUTO
name: Holds a file
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`);
  await h.start(pid, { attachment: { fileId: used.fileId } });
  await h.start(pid, { note: `see ${sharedToo.fileId}` });
  t.same([...referencedFiles(h.store.state)].sort(), [used.fileId, sharedToo.fileId].sort());

  // A blob no record names (a crash between the blob and its record), and a stale temporary file.
  const orphan = sha('orphan');
  mkdirSync(join(h.dir, 'files', orphan.slice(0, 2)), { recursive: true });
  writeFileSync(h.files.blobPath(orphan), 'orphan');
  writeFileSync(join(h.files.tmpDir, 'stale.part'), 'x');
  const young = sha('young');
  mkdirSync(join(h.dir, 'files', young.slice(0, 2)), { recursive: true });
  writeFileSync(h.files.blobPath(young), 'young');

  h.advance(8 * DAY);
  // The young orphan is as new as the clock says: the sweep compares file times with the store's clock.
  const future = (h.clock.now().getTime() - 10 * 60 * 1000) / 1000;
  utimesSync(h.files.blobPath(young), future, future);
  for (const p of [
    h.files.blobPath(orphan),
    join(h.files.tmpDir, 'stale.part'),
    h.files.blobPath(old.sha256),
    h.files.blobPath(shared.sha256),
  ])
    utimesSync(p, (h.clock.now().getTime() - 2 * HOUR) / 1000, (h.clock.now().getTime() - 2 * HOUR) / 1000);

  const report = await h.files.sweep();
  t.same(report, { deleted: 2, kept: 2, blobs: 3 });
  const files = h.store.state.files;
  t.notOk(files[old.fileId], 'an expired file no one names is gone');
  t.notOk(files[shared.fileId], 'so is an expired one whose content another file shares');
  t.ok(files[used.fileId], 'a file a running execution holds is kept');
  t.equal(
    files[used.fileId]!.expiresAt,
    new Date(h.clock.now().getTime() + 7 * DAY).toISOString(),
    'another retention',
  );
  t.ok(files[sharedToo.fileId], 'named inside a text, it is kept too');
  t.notOk(existsSync(h.files.blobPath(old.sha256)), "the deleted file's blob is removed");
  t.ok(existsSync(h.files.blobPath(shared.sha256)), 'a blob another file names stays');
  t.notOk(existsSync(h.files.blobPath(orphan)), 'an old orphan is removed');
  t.notOk(existsSync(join(h.files.tmpDir, 'stale.part')), 'a stale temporary file is removed');
  t.ok(existsSync(h.files.blobPath(young)), 'a young orphan may be on its way to a record: kept');
});

t.test('a file a finished execution names stays while history keeps that execution, and goes with it', async (t) => {
  const h = await engineHarness(t);
  const put = (name: string, text: string) =>
    h.files.put({ organization: 'default', name, mimeType: 'text/plain', content: Buffer.from(text) });
  const started = await put('started.txt', 'named at the start');
  const answered = await put('answered.txt', 'answered into an input');
  const atOnce = await h.publish(`processId: AUTO
name: Finishes at once
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const asks = await h.publish(`processId: AUTO
name: Asks for a file
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: file, next: done }
  done: { type: endEvent }
`);
  // Started and finished in one step: such a step usually goes to history without a journal
  // entry; one naming a file takes the journaled way, so that its hold is recorded.
  const a = await h.start(atOnce, { attachment: { fileId: started.fileId } });
  t.equal(a.stateCd, STATE.COMPLETED);
  const b = await h.start(asks);
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: b.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: answered.fileId },
  });
  await h.archived(a.processInstanceId);
  await h.archived(b.processInstanceId);
  t.notOk(h.store.state.instances[a.processInstanceId], 'both left the live state');
  t.notOk(h.store.state.instances[b.processInstanceId]);
  t.same([...referencedFiles(h.store.state)], [], 'nothing live names the files');
  t.same(h.store.state.files[started.fileId]!.inHistory, [bucketOf(a.processInstanceId)], 'held by its bucket');
  t.same(h.store.state.files[answered.fileId]!.inHistory, [bucketOf(b.processInstanceId)]);

  h.advance(8 * 24 * HOUR);
  t.same(await h.files.sweep(), { deleted: 0, kept: 2, blobs: 0 }, 'expired, but history still has them');
  t.equal(
    h.store.state.files[started.fileId]!.expiresAt,
    new Date(h.clock.now().getTime() + 7 * DAY).toISOString(),
    'looked at again a retention later',
  );

  const r = await h.restart();
  t.same(r.store.state.files[started.fileId]!.inHistory, [bucketOf(a.processInstanceId)], 'the hold is journaled');
  // History's retention goes by its files' real times: a cut-off ahead of now prunes every bucket.
  t.ok((await r.history.prune(new Date(Date.now() + 60_000))).buckets >= 1, 'history pruned');
  t.equal(await r.engine.getInstance({ organization: null }, a.processInstanceId), null, 'the execution is gone');
  r.advance(8 * 24 * HOUR);
  t.match(await r.files.sweep(), { deleted: 2, kept: 0 }, 'nothing refers to them any more');
  t.same(r.store.state.files, {});
  t.notOk(existsSync(r.files.blobPath(started.sha256)), 'their content goes too');
  t.notOk(existsSync(r.files.blobPath(answered.sha256)));
});

t.test('a file memory or a buffered message names is kept; the hold of a pruned bucket is dropped', async (t) => {
  const h = await engineHarness(t);
  const put = (name: string, text: string) =>
    h.files.put({ organization: 'default', name, mimeType: 'text/plain', content: Buffer.from(text) });
  const remembered = await put('remembered.txt', 'in memory');
  const buffered = await put('buffered.txt', 'in a message');
  const pid = await h.publish(`processId: AUTO
name: Remembers a file
nodes:
  start: { type: startEvent, next: keep }
  keep: { type: memoryAction, action: store, namespace: files, key: last, value: { file: "{f}" }, next: done }
  done: { type: endEvent }
`);
  const inst = await h.start(pid, { f: remembered.fileId });
  t.equal(inst.stateCd, STATE.COMPLETED);
  await h.engine.publishEvent({
    organization: 'default',
    eventType: 'nobody.listens',
    correlationKey: null,
    data: { see: buffered.fileId },
    ttlSeconds: 30 * 24 * 3600,
  });
  await h.archived(inst.processInstanceId);
  await h.history.prune(new Date(Date.now() + 60_000)); // the execution is gone: memory alone names it
  h.advance(8 * 24 * HOUR);
  t.same(await h.files.sweep(), { deleted: 0, kept: 2, blobs: 0 });
  t.ok(h.store.state.files[remembered.fileId], 'a file a memory entry names is kept');
  t.equal(h.store.state.files[remembered.fileId]!.inHistory, undefined, 'its pruned bucket is forgotten');
  t.ok(h.store.state.files[buffered.fileId], 'a file a buffered message names is kept');
});

t.test('referencedFiles: every place of the live state that may name a file', async (t) => {
  const id = (n: number) => `file_${String(n).padStart(32, '0')}`;
  const state = initialState();
  const inst = (processInstanceId: string, extra: Partial<Execution>): Execution =>
    ({
      processInstanceId,
      stateCd: STATE.RUNNING,
      variables: {},
      output: null,
      nodes: {},
      logs: [],
      ...extra,
    }) as unknown as Execution;
  const table = ExecutionTable.of(state);
  table.put(inst('0194a1f0-0000-7000-8000-000000000001', { variables: { deep: [{ in: { a: `x ${id(1)} y` } }] } }));
  table.put(
    inst('0194a1f0-0000-7000-8000-000000000002', {
      nodes: { n1: { wait: { kind: 'job', input: { doc: id(2) } } } } as unknown as Execution['nodes'],
    }),
  );
  table.put(inst('0194a1f0-0000-7000-8000-000000000003', { stateCd: STATE.COMPLETED, output: { [id(3)]: true } }));
  state.memory = { default: { ns: { k: { value: [id(4)], updatedAt: '', expiresAt: null } } } };
  state.messages = { m: { data: { f: { fileId: id(5) } } } as unknown as (typeof state.messages)[string] };
  t.same(
    [...referencedFiles(state)].sort(),
    [1, 2, 3, 4, 5].map(id),
    'variables, a wait, a finished one, memory, messages',
  );
});

t.test('a file whose blob went missing reads as FILE_NOT_FOUND', async (t) => {
  const h = await engineHarness(t);
  const f = await h.files.put({
    organization: 'default',
    name: 'x',
    mimeType: 'text/plain',
    content: Buffer.from('x'),
  });
  const { unlinkSync } = await import('node:fs');
  unlinkSync(h.files.blobPath(f.sha256));
  await t.rejects(h.files.read(f), { code: 'FILE_NOT_FOUND' });
  t.type(FileStore, 'function');
});
