import t from 'tap';
import { referencedFiles } from '../../../src/daemon/files/file-store.js';
import { FileRefs } from '../../../src/daemon/state/file-refs.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';

// The file store's collection with executions off the resident state (decision 068, step 7):
// a cold execution's files are known from the file index (state/file-refs.ts), not its document.

const DAY = 24 * 60 * 60 * 1000;

const twoAsks = `processId: AUTO
name: Asks twice
nodes:
  start: { type: startEvent, next: first }
  first: { type: inputNode, inputType: file, next: second }
  second: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const put = (h: EngineHarness, name: string) =>
  h.files.put({ organization: 'default', name, mimeType: 'text/plain', content: Buffer.from(name) });

/** True once execution `id` is cold: off the resident state, kept by the cold side. */
const isCold = (h: EngineHarness, id: string): boolean =>
  h.store.state.instances[id] === undefined && h.engine.executions.coldSummary(id) !== undefined;

t.test('a file only a cold execution names survives a collection; it goes once nothing names it', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: true });
  const atStart = await put(h, 'at-start.txt');
  const answered = await put(h, 'answered.txt');
  const unnamed = await put(h, 'unnamed.txt');
  const pid = await h.publish(twoAsks);
  const a = await h.start(pid, { attachment: { fileId: atStart.fileId } });
  const b = await h.start(pid);
  // Named by a record applied after the start (the reducer keeps the index), not by the start.
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: b.processInstanceId,
    nodeId: 'first',
    action: 'COMPLETE',
    data: { inputValue: answered.fileId },
  });
  await h.rest();
  t.ok(isCold(h, a.processInstanceId), 'the first execution is cold');
  t.ok(isCold(h, b.processInstanceId), 'so is the second');
  t.same(
    [...referencedFiles(h.store.state)].sort(),
    [atStart.fileId, answered.fileId].sort(),
    'the collection finds what cold executions name',
  );

  h.advance(8 * DAY);
  t.match(await h.files.sweep(), { deleted: 1, kept: 2 }, 'kept: the files cold executions name');
  t.ok(h.store.state.files[atStart.fileId], 'a file a cold execution started with is kept');
  t.ok(h.store.state.files[answered.fileId], 'a file answered into a cold execution is kept');
  t.notOk(h.store.state.files[unnamed.fileId], 'a file nothing names is deleted');
  t.ok(isCold(h, a.processInstanceId) && isCold(h, b.processInstanceId), 'the collection read no document');

  // Once both finish and history no longer has them, nothing names the files.
  for (const [inst, node, inputValue] of [
    [a, 'first', atStart.fileId],
    [a, 'second', 'done'],
    [b, 'second', 'done'],
  ] as const)
    await h.engine.submitTask({
      organization: 'default',
      processInstanceId: inst.processInstanceId,
      nodeId: node,
      action: 'COMPLETE',
      data: { inputValue },
    });
  await h.archived(a.processInstanceId);
  await h.archived(b.processInstanceId);
  t.equal(FileRefs.held(h.store.state)?.of(a.processInstanceId).size, 0, 'an archived execution leaves the index');
  await h.history.prune(new Date(Date.now() + 60_000));
  h.advance(8 * DAY);
  t.match(await h.files.sweep(), { deleted: 2, kept: 0 }, 'then they go');
});

t.test(
  'after a restart the recovery walk makes the index again: a file stays while its execution is cold',
  async (t) => {
    const first = await engineHarness(t, undefined, undefined, { cold: true });
    const held = await put(first, 'held.txt');
    const pid = await first.publish(twoAsks);
    const a = await first.start(pid, { note: `see ${held.fileId}` });
    const h = await first.restart();
    t.ok(FileRefs.held(h.store.state)?.of(a.processInstanceId).has(held.fileId), 'the walk read it from the document');
    await h.rest();
    t.ok(isCold(h, a.processInstanceId), 'cold after the restart');
    h.advance(8 * DAY);
    t.same(await h.files.sweep(), { deleted: 0, kept: 1, blobs: 0 });
    t.ok(h.store.state.files[held.fileId], 'kept');
    const inst = await h.get(a.processInstanceId);
    t.equal(inst.stateCd, STATE.RUNNING, 'read back whole');
  },
);

t.test('without a cold side no file index is made', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(twoAsks);
  const f = await put(h, 'f.txt');
  await h.start(pid, { attachment: { fileId: f.fileId } });
  t.equal(FileRefs.held(h.store.state), null, 'nothing kept, nothing paid');
  t.same([...referencedFiles(h.store.state)], [f.fileId], 'the resident execution is read whole');
});

t.test('after a restart that leaves executions unread, their files survive the sweep', async (t) => {
  // A lazy open (executionCache): nothing resident after the restart, no file index entry either.
  const first = await engineHarness(t, undefined, undefined, { executionCache: 0 });
  const named = await put(first, 'named.txt');
  const unnamed = await put(first, 'unnamed.txt');
  const pid = await first.publish(twoAsks);
  const a = await first.start(pid, { attachment: { fileId: named.fileId } });
  const withB = await put(first, 'with-b.txt');
  const b = await first.start(pid, { attachment: { fileId: withB.fileId } });
  const h = await first.restart();
  t.ok(isCold(h, a.processInstanceId), 'the execution was left unread');
  // One read back before any sweep: its entry holds what its document names, and what came since.
  const givenB = await put(h, 'given-b.txt');
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: b.processInstanceId,
    nodeId: 'first',
    action: 'COMPLETE',
    data: { inputValue: givenB.fileId },
  });
  t.same(
    [...(FileRefs.held(h.store.state)?.of(b.processInstanceId) ?? [])].sort(),
    [withB.fileId, givenB.fileId].sort(),
    'an execution read back counts what its document names',
  );
  t.ok(FileRefs.held(h.store.state)?.coldUnread, 'the file index says what it does not know');
  h.advance(8 * DAY);
  t.match(await h.files.sweep(), { deleted: 1, kept: 3 }, 'the sweep read it first');
  t.ok(h.store.state.files[named.fileId], 'a file an unread execution names is kept');
  t.notOk(h.store.state.files[unnamed.fileId], 'a file nothing names is deleted');
  t.ok(isCold(h, a.processInstanceId), 'reading its files left it cold');
  t.notOk(FileRefs.held(h.store.state)?.coldUnread, 'the index is whole now');
  // Read back and changed: its entry holds what its document named as well as what came since.
  const later = await put(h, 'later.txt');
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: a.processInstanceId,
    nodeId: 'first',
    action: 'COMPLETE',
    data: { inputValue: later.fileId },
  });
  t.same(
    [...(FileRefs.held(h.store.state)?.of(a.processInstanceId) ?? [])].sort(),
    [named.fileId, later.fileId].sort(),
    'what it was read back with counts, with what it was given since',
  );
  h.advance(8 * DAY);
  t.match(await h.files.sweep(), { deleted: 0, kept: 4 });
});

t.test('executions left unread during the file index pass keep the index unfinished', async (t) => {
  const first = await engineHarness(t, undefined, undefined, { executionCache: 0 });
  const pid = await first.publish(twoAsks);
  const f = await put(first, 'f.txt');
  await first.start(pid, { attachment: { fileId: f.fileId } });
  const h = await first.restart();
  const executions = h.engine.executions;
  t.ok(FileRefs.held(h.store.state)?.coldUnread, 'the restart left it unread');
  // A partition taken while the pass reads: its executions may sort before the pass's cursor.
  const pass = executions.learnColdFiles();
  executions.coldFilesUnread();
  t.equal(await pass, false, 'the pass does not call the index whole');
  t.ok(FileRefs.held(h.store.state)?.coldUnread, 'still unfinished');
  t.equal(await executions.learnColdFiles(), true, 'the next pass covers them');
  t.notOk(FileRefs.held(h.store.state)?.coldUnread, 'whole');
});
