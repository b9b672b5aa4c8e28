import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { AppendFile } from '../../../src/daemon/store/append-file.js';

t.test('appends in one tick share one write and one fdatasync', async (t) => {
  const path = join(t.testdir(), 'a.log');
  const file = new AppendFile(path);
  const acks = Array.from({ length: 1000 }, (_, i) => file.append(Buffer.from(`line ${i}\n`)).durable);
  t.equal(file.syncs, 0, 'nothing is synced before the flush runs');
  await Promise.all(acks);
  t.equal(file.syncs, 1, 'one fdatasync for 1000 appends');
  const text = await readFile(path, 'utf8');
  t.equal(text.split('\n').length - 1, 1000);
  t.equal(text.slice(0, 14), 'line 0\nline 1\n', 'in append order');
  await file.close();
});

t.test('an append resolves only after an fdatasync that covers it', async (t) => {
  const file = new AppendFile(join(t.testdir(), 'a.log'));
  const first = file.append(Buffer.from('one\n')).durable;
  let secondSettled = false;
  const second = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    const p = file.append(Buffer.from('two\n')).durable;
    void p.then(() => (secondSettled = true));
    return p;
  });
  await first;
  const syncsAfterFirst = file.syncs;
  t.ok(syncsAfterFirst >= 1);
  await second;
  t.ok(secondSettled);
  t.ok(file.syncs >= syncsAfterFirst, 'the second append waited for a sync of its own or a later one');
  await file.close();
});

t.test('offsets and size account for every append', async (t) => {
  const path = join(t.testdir(), 'a.log');
  const file = new AppendFile(path);
  const a = file.append(Buffer.from('héllo\n'));
  const b = file.append(Buffer.from('x\n'));
  t.equal(a.offset, 0);
  t.equal(b.offset, Buffer.byteLength('héllo\n'));
  await file.close();
  t.equal((await stat(path)).size, file.size);
  t.equal((await stat(path)).mode & 0o777, 0o600, 'created 0600');
  t.throws(() => file.append(Buffer.from('late\n')), /closed/, 'append after close throws');
});

t.test('a write error fails the batch and every later append', async (t) => {
  const dir = t.testdir();
  // A directory cannot be opened for appending: the first flush fails.
  const file = new AppendFile(dir);
  await t.rejects(file.append(Buffer.from('x\n')).durable, { code: 'EISDIR' });
  t.throws(() => file.append(Buffer.from('y\n')), { code: 'EISDIR' }, 'failed for good');
});

t.test('the gate holds the first write back until it settles', async (t) => {
  const path = join(t.testdir(), 'b.log');
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const file = new AppendFile(path, 0, gate);
  const ack = file.append(Buffer.from('b\n')).durable;
  await new Promise((resolve) => setImmediate(resolve));
  await t.rejects(stat(path), { code: 'ENOENT' }, 'nothing written while the gate is shut');
  open();
  await ack;
  t.equal(await readFile(path, 'utf8'), 'b\n');
  await file.close();
});
