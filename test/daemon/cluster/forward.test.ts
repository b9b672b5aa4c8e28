/**
 * askDaemon's `signal` (a daemon asking another, decision 042): it gives up a wait for an
 * answer, never an answer already begun (another daemon's long poll answers with jobs it locked
 * for the asker, which must give them back, not drop them).
 */
import { getEventListeners } from 'node:events';
import t from 'tap';
import { askDaemon } from '../../../src/daemon/cluster/forward.js';
import { eventually } from '../../helpers/eventually.js';
import { holdingServer } from '../../helpers/holding-server.js';

const activate = (signal: AbortSignal) => ({
  method: 'POST',
  path: '/jobs/activate',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
  signal,
});

t.test('aborted before the answer begins: it rejects and the other daemon sees the asker go', async (t) => {
  const { url, held, closed } = await holdingServer(t);
  const stop = new AbortController();
  const asked = askDaemon(url, activate(stop.signal));
  await eventually('the other daemon has the request', () => held.length === 1);
  stop.abort();
  await t.rejects(asked, { name: 'AbortError' });
  await eventually('the other daemon saw it go', () => closed[0]);
});

t.test('aborted just as the other daemon answers: its answer is read, for the asker to give back', async (t) => {
  const { url, held } = await holdingServer(t);
  const stop = new AbortController();
  const asked = askDaemon(url, activate(stop.signal));
  await eventually('the other daemon has the request', () => held.length === 1);
  // The other daemon locked a job and wrote its answer before it could see the asker go.
  stop.abort();
  held[0]!.writeHead(200, { 'content-type': 'application/json' });
  held[0]!.end('{"jobs":[{"key":"k1"}]}');
  const answer = await asked;
  t.equal(answer.status, 200);
  t.same(JSON.parse(answer.body.toString()), { jobs: [{ key: 'k1' }] });
});

t.test('aborted after the answer began: it is read to its end', async (t) => {
  const { url, held } = await holdingServer(t);
  const stop = new AbortController();
  const asked = askDaemon(url, activate(stop.signal));
  await eventually('the other daemon has the request', () => held.length === 1);
  held[0]!.writeHead(200, { 'content-type': 'application/json' });
  held[0]!.write('{"jobs":');
  await eventually('the answer began here', () => getEventListeners(stop.signal, 'abort').length === 0);
  stop.abort();
  held[0]!.end('[{"key":"k1"}]}');
  const answer = await asked;
  t.equal(answer.status, 200);
  t.same(JSON.parse(answer.body.toString()), { jobs: [{ key: 'k1' }] });
});

t.test('an answer begun that stalls counts as broken off', async (t) => {
  const { url, held } = await holdingServer(t);
  const asked = askDaemon(url, activate(new AbortController().signal));
  await eventually('the other daemon has the request', () => held.length === 1);
  held[0]!.writeHead(200, { 'content-type': 'application/json' });
  held[0]!.write('{"jobs":');
  await t.rejects(asked, /the answer broke off/);
});
