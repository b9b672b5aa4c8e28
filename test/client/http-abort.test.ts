/**
 * ApiClient.request's `signal`: it gives up a wait for an answer, never an answer already
 * begun (a long poll's answer carries jobs the daemon locked for the caller).
 */
import { getEventListeners } from 'node:events';
import t from 'tap';
import { ApiClient } from '../../src/client/http.js';
import { eventually } from '../helpers/eventually.js';
import { holdingServer } from '../helpers/holding-server.js';

const apiClient = (url: string) => new ApiClient({ url, apiKey: null, credentialSource: 'none' });

t.test('aborted before the answer begins: the request rejects and the connection closes', async (t) => {
  const { url, held, closed } = await holdingServer(t);
  const client = apiClient(url);
  const signal = new AbortController();
  const asked = client.request('POST', '/jobs/activate', {}, signal.signal);
  await eventually('the server has the request', () => held.length === 1);
  signal.abort();
  await t.rejects(asked, { name: 'AbortError' });
  await eventually('the server saw it go', () => closed[0]);
  t.equal(held[0]!.writableEnded, false, 'nothing was answered');
});

t.test('aborted after the answer began: it is read to its end', async (t) => {
  const { url, held } = await holdingServer(t);
  const client = apiClient(url);
  const signal = new AbortController();
  const asked = client.request<{ jobs: string[] }>('POST', '/jobs/activate', {}, signal.signal);
  await eventually('the server has the request', () => held.length === 1);
  const res = held[0]!;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"jobs":');
  // The client stops listening for the abort once the answer's head arrived.
  await eventually('the answer began at the client', () => getEventListeners(signal.signal, 'abort').length === 0);
  signal.abort();
  res.end('["j1"]}');
  t.same(await asked, { jobs: ['j1'] });
});
