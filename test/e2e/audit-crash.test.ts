import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { AuditPage } from '../../src/shared/api/index.js';
import { startDaemon } from '../helpers/cli.js';

const FLOW_ID = '3c0c7d2e-5a1b-4f60-9e2d-7b8a9c0d1e2f';
const FLOW = `processId: ${FLOW_ID}
name: One step
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** Starts sent at once; the daemon is killed once this many were answered, the rest in flight. */
const SENT = 200;
const KILL_AFTER = 60;

t.test('kill -9 under a load of starts: every start answered has its audit record after the restart', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const first = await startDaemon(t, { dataDir });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const post = (url: string, path: string, body: object) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  t.ok((await post(first.url, '/admin/flows', { source: FLOW, organization: 'default' })).ok, 'published');

  const answered: string[] = [];
  let killed = false;
  const sends = Array.from({ length: SENT }, async () => {
    try {
      const res = await post(first.url, '/process/start', { processId: FLOW_ID, data: {} });
      if (res.status !== 200) return;
      const { processInstanceId } = (await res.json()) as { processInstanceId: string };
      answered.push(processInstanceId);
      if (answered.length >= KILL_AFTER && !killed) {
        killed = true;
        process.kill(first.pid, 'SIGKILL');
      }
    } catch {
      // cut off by the kill: never acknowledged, so nothing is owed
    }
  });
  await Promise.all(sends);
  t.ok(killed, `killed after ${KILL_AFTER} answers`);
  t.ok(answered.length >= KILL_AFTER && answered.length <= SENT);

  const second = await startDaemon(t, { dataDir });
  const recorded = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await fetch(
      `${second.url}/admin/audit?action=/process/start&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      { headers: { 'x-api-key': key } },
    );
    t.equal(res.status, 200);
    const page = (await res.json()) as AuditPage;
    for (const e of page.items) recorded.add(e.targets.processInstanceId!);
    cursor = page.nextCursor;
    if (cursor === null) break;
  }
  const missing = answered.filter((id) => !recorded.has(id));
  t.same(missing, [], `each of the ${answered.length} starts answered has its record`);
});
