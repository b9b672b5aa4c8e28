import { PassThrough } from 'node:stream';
import t from 'tap';
import { ERROR_CODES } from '../../../src/shared/errors.js';
import { answerClientError } from '../../../src/daemon/api/server.js';

/** What answerClientError writes on a socket for a parser error of `code`, and whether it closed it. */
function answer(code: string | undefined): {
  status: number;
  body: Record<string, unknown>;
  destroyed: boolean;
  text: string;
} {
  const socket = new PassThrough();
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  answerClientError(Object.assign(new Error('parse error'), code === undefined ? {} : { code }), socket);
  socket.read();
  const at = text.indexOf('\r\n\r\n');
  return {
    status: Number(text.slice(9, 12)),
    body: at < 0 ? {} : (JSON.parse(text.slice(at + 4)) as Record<string, unknown>),
    destroyed: socket.destroyed,
    text,
  };
}

t.test('each parser error is answered in the error body, then the connection is closed', async (t) => {
  const cases: Array<[string | undefined, number, string]> = [
    ['HPE_INVALID_METHOD', 400, 'VALIDATION_ERROR'],
    ['HPE_INVALID_HEADER_TOKEN', 400, 'VALIDATION_ERROR'],
    ['HPE_INVALID_CONTENT_LENGTH', 400, 'VALIDATION_ERROR'],
    ['HPE_HEADER_OVERFLOW', 431, 'REQUEST_HEADERS_TOO_LARGE'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'REQUEST_TIMEOUT'],
    ['ERR_HTTP_HEADERS_TIMEOUT', 408, 'REQUEST_TIMEOUT'],
    [undefined, 400, 'VALIDATION_ERROR'],
  ];
  for (const [code, status, error] of cases) {
    const a = answer(code);
    t.equal(a.status, status, `${code}: status`);
    t.match(a.body, { error, message: String, timestamp: String }, `${code}: the error body`);
    t.ok(error in ERROR_CODES, `${code}: a catalogue code`);
    t.match(a.text, /\r\nConnection: close\r\n/, `${code}: says it closes`);
    t.ok(a.destroyed, `${code}: and closes`);
  }
});

t.test('nothing is written on a reset or destroyed socket', async (t) => {
  const reset = new PassThrough();
  let written = '';
  reset.on('data', (c: Buffer) => (written += c.toString()));
  answerClientError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), reset);
  reset.read();
  t.equal(written, '');
  const gone = new PassThrough();
  gone.destroy();
  t.doesNotThrow(() => answerClientError(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }), gone));
});

t.test('a connection that timed out without sending a byte is closed without an answer', async (t) => {
  for (const code of ['ERR_HTTP_REQUEST_TIMEOUT', 'ERR_HTTP_HEADERS_TIMEOUT']) {
    const silent = Object.assign(new PassThrough(), { bytesRead: 0 });
    let written = '';
    silent.on('data', (c: Buffer) => (written += c.toString()));
    answerClientError(Object.assign(new Error('timeout'), { code }), silent);
    silent.read();
    t.equal(written, '', `${code}: nothing written`);
    t.ok(silent.destroyed, `${code}: closed`);
    const started = Object.assign(new PassThrough(), { bytesRead: 12 });
    let answered = '';
    started.on('data', (c: Buffer) => (answered += c.toString()));
    answerClientError(Object.assign(new Error('timeout'), { code }), started);
    started.read();
    t.match(answered, /^HTTP\/1\.1 408 /, `${code}: a request begun is answered 408`);
  }
});
