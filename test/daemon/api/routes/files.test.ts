import t from 'tap';
import type { FilePage, FileView } from '../../../../src/shared/api/index.js';
import { apiHarness } from '../../../helpers/api.js';

const upload = (name: string, type: string, body: string | Buffer) => ({
  method: 'POST' as const,
  url: `/files?name=${encodeURIComponent(name)}`,
  headers: { 'content-type': type },
  payload: body,
});

t.test('an upload of any type is stored as its bytes, downloaded as them, with its metadata', async (t) => {
  const h = await apiHarness(t);
  const op = await h.key('operator', 'acme');
  const json = '{"deep":[[[[1]]]],"kept":"as bytes"}';
  const res = await h.call(op, upload('order.json', 'application/json; charset=utf-8', json));
  t.equal(res.statusCode, 201, res.body);
  const file = res.json() as FileView;
  t.match(file, { name: 'order.json', mimeType: 'application/json', bytes: json.length, organization: 'acme' });
  const down = await h.call(op, { method: 'GET', url: `/files/${file.fileId}` });
  t.equal(down.statusCode, 200);
  t.equal(down.body, json, 'the bytes as uploaded, never parsed');
  t.equal(down.headers['content-type'], 'application/json');
  t.equal(down.headers['content-length'], String(json.length));
  t.equal(down.headers.etag, `"${file.sha256}"`);
  t.match(down.headers['content-disposition'], /attachment; filename="order.json"/);
  const meta = await h.call(op, { method: 'GET', url: `/files/${file.fileId}/meta` });
  t.same(meta.json(), file);

  const binary = Buffer.from([0, 255, 1, 254, 10, 13]);
  const bin = (await h.call(op, upload('b.bin', 'application/octet-stream', binary))).json() as FileView;
  t.same(Buffer.from((await h.call(op, { method: 'GET', url: `/files/${bin.fileId}` })).rawPayload), binary);
  const untyped = await h.call(op, { method: 'POST', url: '/files', payload: Buffer.from('xyz') });
  t.match(untyped.json(), { name: 'upload', mimeType: 'application/octet-stream', bytes: 3 }, 'no type: bytes');
  const custom = await h.call(op, {
    method: 'POST',
    url: '/files',
    payload: 'x',
    headers: { 'content-type': 'audio/x-custom' },
  });
  t.match(custom.json(), { mimeType: 'audio/x-custom' });
  const malformed = await h.call(op, {
    method: 'POST',
    url: '/files',
    payload: 'x',
    headers: { 'content-type': 'nonsense' },
  });
  t.equal(malformed.statusCode, 400, 'a content type that is not one is refused');
});

t.test("another organization's file is FILE_NOT_FOUND; a system key reads any; delete needs ADMIN", async (t) => {
  const h = await apiHarness(t);
  const acme = await h.key('operator', 'acme');
  const other = await h.key('admin', 'other');
  const system = await h.key('admin', null);
  const file = (await h.call(acme, upload('a.txt', 'text/plain', 'acme only'))).json() as FileView;
  for (const url of [`/files/${file.fileId}`, `/files/${file.fileId}/meta`]) {
    const res = await h.call(other, { method: 'GET', url });
    t.equal(res.statusCode, 404, url);
    t.equal(res.json().error, 'FILE_NOT_FOUND');
  }
  t.equal((await h.call(other, { method: 'DELETE', url: `/files/${file.fileId}` })).statusCode, 404);
  t.same((await h.call(other, { method: 'GET', url: '/files' })).json(), { items: [], nextCursor: null });
  t.equal((await h.call(system, { method: 'GET', url: `/files/${file.fileId}` })).body, 'acme only');
  t.equal(
    (await h.call(acme, { method: 'DELETE', url: `/files/${file.fileId}` })).statusCode,
    403,
    'an operator may not delete',
  );
  const deleted = await h.call(system, { method: 'DELETE', url: `/files/${file.fileId}` });
  t.same(deleted.json(), { fileId: file.fileId, deleted: true });
  t.equal((await h.call(acme, { method: 'GET', url: `/files/${file.fileId}` })).statusCode, 404);
  const viewer = await h.key('viewer', 'acme');
  t.equal((await h.call(viewer, upload('v.txt', 'text/plain', 'no'))).statusCode, 403, 'a viewer may not upload');
  t.equal((await h.call(null, { method: 'GET', url: '/files' })).statusCode, 401);
  t.equal((await h.call(acme, { method: 'GET', url: '/files/not-an-id' })).statusCode, 400);
});

t.test('the list: newest first, a page at a time, by an opaque cursor', async (t) => {
  const h = await apiHarness(t);
  const op = await h.key('operator', 'acme');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(((await h.call(op, upload(`f${i}.txt`, 'text/plain', `file ${i}`))).json() as FileView).fileId);
    h.clock.advance(1000);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 5; page++) {
    const res = await h.call(op, { method: 'GET', url: `/files?limit=2${cursor ? `&cursor=${cursor}` : ''}` });
    const body = res.json() as FilePage;
    seen.push(...body.items.map((f) => f.fileId));
    cursor = body.nextCursor;
    if (cursor === null) break;
  }
  t.same(seen, [...ids].reverse());
  t.equal((await h.call(op, { method: 'GET', url: '/files?cursor=nope' })).statusCode, 400);
});

t.test('an upload over the limit is 413 PAYLOAD_TOO_LARGE, by its length or as it streams', async (t) => {
  const h = await apiHarness(t, { engine: { maxFileBytes: 16 } });
  const op = await h.key('operator', 'acme');
  const res = await h.call(op, upload('big.txt', 'text/plain', 'x'.repeat(17)));
  t.equal(res.statusCode, 413);
  t.equal(res.json().error, 'PAYLOAD_TOO_LARGE');
  t.same(h.store.state.files, {}, 'nothing stored');
  const ok = await h.call(op, upload('fits.txt', 'text/plain', 'x'.repeat(16)));
  t.equal(ok.statusCode, 201);
});

t.test('GET /files/limits says the limit, to any reader', async (t) => {
  const h = await apiHarness(t, { engine: { maxFileBytes: 16 } });
  const viewer = await h.key('viewer', 'acme');
  const res = await h.call(viewer, { method: 'GET', url: '/files/limits' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { maxBytes: 16 });
  t.equal((await h.call(null, { method: 'GET', url: '/files/limits' })).statusCode, 401);
});
