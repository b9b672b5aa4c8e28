import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { killIfAlive, wfxIn } from '../helpers/cli.js';

/** Ends as soon as it starts: each execution goes straight to history. */
const FLOW = `processId: 3c9e2a41-7b6d-4f0e-9a1c-5d8b2e4f6a70
name: Instant
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** Starts a background daemon on `dataDir` (port 0); stopped, or killed, at teardown. */
async function startOn(
  t: Test,
  dataDir: string,
): Promise<{
  url: string;
  call: (
    key: string | null,
    method: string,
    path: string,
    payload?: object,
  ) => Promise<{ status: number; body: Record<string, unknown> }>;
}> {
  const res = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
  if (res.code !== 0) throw new Error(res.stderr);
  const info = JSON.parse(res.stdout) as { pid: number; url: string };
  t.teardown(async () => {
    await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
    killIfAlive(info.pid);
  });
  const call = async (key: string | null, method: string, path: string, payload?: object) => {
    const r = await fetch(`${info.url}${path}`, {
      method,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...(payload ? { 'content-type': 'application/json' } : {}) },
      body: payload ? JSON.stringify(payload) : undefined,
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return { url: info.url, call };
}

t.test(
  'a damaged history record over real HTTP: HISTORY_DAMAGED for it, the others read, reported in the log and by wfx daemon status',
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    let d = await startOn(t, dataDir);
    const bootstrap = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const key = (
      await d.call(bootstrap, 'POST', '/admin/api-keys', { name: 'dev', role: 'developer', organization: 'default' })
    ).body.apiKey as string;
    const processId = (await d.call(key, 'POST', '/admin/flows', { source: FLOW })).body.processId as string;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await d.call(key, 'POST', '/process/exec', { processId, data: { i } })).body.processInstanceId as string,
      );
    for (const id of ids)
      t.match((await d.call(key, 'GET', `/process/instance/${id}`)).body, { stateCd: 1 }, 'finished, in history');
    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0);

    // 4 bytes of the second execution's record changed on disk (past its header, before its LF).
    const historyDir = join(dataDir, 'history');
    const file = (await readdir(historyDir)).find((n) => n.endsWith('.jsonl'))!;
    const bytes = await readFile(join(historyDir, file));
    const offset = bytes.lastIndexOf(0x0a, bytes.indexOf(` ${ids[1]}`)) + 1; // the start of its frame
    const fh = await open(join(historyDir, file), 'r+');
    await fh.write(Buffer.from('ZZZZ'), 0, 4, offset + 80);
    await fh.close();

    d = await startOn(t, dataDir);
    const damaged = await d.call(key, 'GET', `/process/instance/${ids[1]}`);
    t.equal(damaged.status, 500);
    t.match(damaged.body, { error: 'HISTORY_DAMAGED', details: { file, offset } });
    for (const id of [ids[0]!, ids[2]!])
      t.equal((await d.call(key, 'GET', `/process/instance/${id}`)).status, 200, 'the records around it are read');

    const status = await wfxIn(['daemon', 'status', '--json', '--data-dir', dataDir]);
    t.match(JSON.parse(status.stdout), {
      health: {
        status: 'ok',
        history: { damagedRecords: 1, findings: [{ file, offset, code: 'HISTORY_FRAME_DAMAGED' }] },
      },
    });
    t.notMatch(status.stdout, ids[1]!, '/health needs no credential: it says where, not which execution');
    const text = await wfxIn(['daemon', 'status', '--data-dir', dataDir]);
    t.match(
      text.stdout,
      `HISTORY_FRAME_DAMAGED ${file} at byte ${offset}`,
      'the text status names the file and offset',
    );

    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0, 'stopped (which flushes the log)');
    const log = (await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8'))
      .split('\n')
      .filter((l) => l.includes('HISTORY_FRAME_DAMAGED'));
    t.equal(log.length, 1, 'one log line');
    t.match(JSON.parse(log[0]!), { level: 50, file: join(historyDir, file), offset, instanceId: ids[1] });
  },
);
