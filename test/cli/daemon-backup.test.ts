import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import type { CreateKeyBody } from '../../src/shared/api/index.js';
import { checkDataDir } from '../../src/daemon/ops/check.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { codeOf } from '../helpers/error-code.js';

const ASK = `processId: 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, formTitle: "How many?", next: done }
  done: { type: endEvent }
`;
const QUICK = `processId: 6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c
name: Quick
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const ASK_ID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const QUICK_ID = '6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c';

t.test('wfx daemon backup while starts go on: the copy holds every acknowledged start and checks clean', async (t) => {
  const cwd = t.testdir({ 'ask.yaml': ASK, 'quick.yaml': QUICK });
  const { url } = await startDaemon(t, { cwd });
  const admin = await adminClient(cwd, url);
  for (const source of [ASK, QUICK]) await admin.flows.publish({ source });
  const start = async (processId: string): Promise<string> =>
    (await admin.process.startAny({ processId })).processInstanceId;

  const waiting: string[] = [];
  for (let i = 0; i < 6; i++) waiting.push(await start(ASK_ID));
  const finished: string[] = [];
  for (let i = 0; i < 4; i++) finished.push(await start(QUICK_ID));
  const answered = waiting.splice(0, 3);
  for (const id of answered)
    await admin.tasks.answer({ processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 7 } });

  // Starts go on during the backup: a bounded loop, stopped once the backup has answered.
  let backupDone = false;
  const during: string[] = [];
  let reached!: () => void;
  const someStarted = new Promise<void>((resolve) => (reached = resolve));
  const loop = (async () => {
    for (let i = 0; i < 2000 && !backupDone; i++) {
      during.push(await start(i % 2 === 0 ? ASK_ID : QUICK_ID));
      if (during.length === 20) reached();
    }
    reached();
  })();
  await someStarted;
  // Every start acknowledged before the request is sent must be in the copy.
  const acknowledged = [...during];
  const res = await wfxIn(['daemon', 'backup', 'copy', '--json'], { cwd });
  backupDone = true;
  await loop;
  t.equal(res.code, 0, res.stderr);
  t.ok(during.length > acknowledged.length, 'starts went on while the backup ran');
  const report = JSON.parse(res.stdout) as {
    directory: string;
    snapshotSeq: number;
    lastSeq: number;
    files: number;
    bytes: number;
  };
  const copy = join(cwd, 'copy');
  t.match(report, { directory: copy, snapshotSeq: Number, lastSeq: Number, files: Number, bytes: Number });
  t.ok(report.lastSeq >= report.snapshotSeq && report.snapshotSeq > 0, 'a snapshot, then the journal after it');
  t.ok(report.files >= 4, 'snapshot, manifest, a segment, a history file at least');

  t.same(await checkDataDir(copy), [], 'wfx daemon check finds nothing on the copy');
  t.equal((await stat(copy)).mode & 0o777, 0o700, 'the copy is private');
  t.equal((await stat(join(copy, 'store.manifest'))).mode & 0o777, 0o600);
  for (const name of await readdir(join(copy, 'history')))
    t.equal((await stat(join(copy, 'history', name))).mode & 0o777, 0o600, name);
  const names = await readdir(copy);
  for (const left of ['bootstrap.key', 'daemon.json', 'daemon.lock', 'logs'])
    t.notOk(names.includes(left), `${left} is not copied`);

  // A daemon on the copy starts (no bootstrap.key needed: its organizations exist) and the
  // original's admin key works there.
  const second = await startDaemon(t, { dataDir: copy });
  const restored = new WfxClient({ url: second.url, apiKey: admin.connection.apiKey, credentialSource: 'test' });
  const instance = (id: string) => restored.instances.get(id);
  for (const id of waiting) t.equal((await instance(id)).stateCd, 0, `waiting ${id}`);
  for (const id of [...answered, ...finished]) t.equal((await instance(id)).stateCd, 1, `finished ${id}`);
  for (const id of acknowledged) t.ok([0, 1].includes((await instance(id)).stateCd), `started during the loop ${id}`);
  t.notOk((await readdir(copy)).includes('bootstrap.key'), 'a daemon on the copy makes no new bootstrap key');
});

t.test('wfx daemon backup: a one-line summary; refused targets leave everything as it was', async (t) => {
  const cwd = t.testdir({ full: { 'keep.txt': 'mine' }, 'a-file': 'x', empty: {} });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });

  const human = await run(['daemon', 'backup', 'empty']);
  t.equal(human.code, 0, human.stderr);
  t.match(
    human.stdout,
    /^backed up to .*empty: journal entries up to \d+ \(snapshot at \d+\), \d+ files, \d+ bytes\nnot in the copy: the secrets key [0-9a-f]{16} \(.*\/\.wfx\/secrets\.key\)\. .+\n$/,
    'and where the key the copy needs is, which it does not hold',
  );
  t.notOk((await readdir(join(cwd, 'empty'))).includes('secrets.key'));
  t.same(await checkDataDir(join(cwd, 'empty')), [], 'an empty directory given is filled');

  for (const target of ['full', 'a-file', 'empty']) {
    const refused = await run(['daemon', 'backup', target, '--json']);
    t.equal(refused.code, 1, target);
    t.match(refused.stderr, /^BACKUP_TARGET_NOT_EMPTY: /, target);
    t.equal(refused.stdout, '', 'nothing on stdout');
  }
  t.same(await readdir(join(cwd, 'full')), ['keep.txt'], 'nothing written');
  t.equal(await readFile(join(cwd, 'full', 'keep.txt'), 'utf8'), 'mine');
  t.equal(await readFile(join(cwd, 'a-file'), 'utf8'), 'x');

  const inside = await run(['daemon', 'backup', '.wfx/copy']);
  t.equal(inside.code, 1);
  t.match(inside.stderr, /^BACKUP_TARGET_INVALID: /, 'never into the data directory');
  t.notOk((await readdir(join(cwd, '.wfx'))).includes('copy'));
  const dotted = await run(['daemon', 'backup', '.wfx/..copy']);
  t.match(dotted.stderr, /^BACKUP_TARGET_INVALID: /, 'a name that starts with two dots is inside too');
});

t.test('POST /admin/backup: a system admin only, an absolute directory only', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const admin = await adminClient(cwd, url);
  const as = (apiKey: string) => new WfxClient({ url, apiKey, credentialSource: 'test' });
  const keyFor = async (body: Omit<CreateKeyBody, 'name'>) => (await admin.keys.create({ name: 'k', ...body })).apiKey;
  const target = join(cwd, 'copy');

  const orgAdmin = as(await keyFor({ role: 'admin', organization: 'acme' }));
  t.equal(await codeOf(orgAdmin.admin.backup(target)), 'FORBIDDEN', 'an organization admin');
  const viewer = as(await keyFor({ role: 'viewer', system: true }));
  t.equal(await codeOf(viewer.admin.backup(target)), 'FORBIDDEN', 'a system viewer');
  const orgRun = await wfxIn(['daemon', 'backup', target, '--api-key', orgAdmin.connection.apiKey!], { cwd });
  t.equal(orgRun.code, 1);
  t.match(orgRun.stderr, /^FORBIDDEN: /);
  t.notOk((await readdir(cwd)).includes('copy'), 'nothing written');

  t.equal(await codeOf(admin.admin.backup('relative/copy')), 'VALIDATION_ERROR');
  t.equal(await codeOf(admin.http.post('/admin/backup', {})), 'VALIDATION_ERROR');
  await writeFile(join(cwd, 'parent-file'), 'x');
  t.equal(
    await codeOf(admin.admin.backup(join(cwd, 'parent-file', 'copy'))),
    'BACKUP_TARGET_INVALID',
    'its parent is a file',
  );
  t.match(await admin.admin.backup(target), { directory: target, lastSeq: Number });
});
