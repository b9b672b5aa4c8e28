import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { ERROR_CODES } from '../../src/shared/errors.js';
import { startDaemon } from '../helpers/cli.js';

/** What came back on a raw connection: the status line's code, and the body. */
interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

/** Writes `request` bytes on a fresh connection to 127.0.0.1:`port` and reads until the server closes it (bounded). */
function raw(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer closed within 10 s to ${JSON.stringify(request.slice(0, 60))}`));
    }, 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    // The server may close while the request is still being written (an over-long header).
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
      const at = text.indexOf('\r\n\r\n');
      resolve({ status, body: at < 0 ? '' : text.slice(at + 4) });
    });
    socket.write(request);
  });
}

t.test(
  'malformed HTTP over a real socket: every answer is the error body with a catalogue code, and the daemon stays healthy',
  async (t) => {
    const dataDir = join(t.testdir({}), 'data');
    const daemon = await startDaemon(t, { dataDir });
    const port = Number(new URL(daemon.url).port);
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    const post = (headers: string, body: string) =>
      `POST /process/start HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n${headers}\r\n${body}`;
    const cases: Array<{ what: string; request: string; status: number; code: string }> = [
      { what: 'a bad request line', request: 'GARBAGE\r\n\r\n', status: 400, code: 'VALIDATION_ERROR' },
      {
        what: 'a bad HTTP version',
        request: 'GET /health HTTP/9.9\r\nHost: x\r\n\r\n',
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'a header without a colon',
        request: 'GET /health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n',
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'an over-long header',
        request: `GET /health HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`,
        status: 431,
        code: 'REQUEST_HEADERS_TOO_LARGE',
      },
      {
        what: 'a Content-Length that is not a number',
        request: post('Content-Type: application/json\r\nContent-Length: abc\r\n', '{}'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'two Content-Lengths that differ',
        request: post('Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n', '{}'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'Content-Length and chunked together',
        request: post(
          'Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n',
          '0\r\n\r\n',
        ),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'invalid JSON',
        request: post('Content-Type: application/json\r\nContent-Length: 5\r\n', '{bad}'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'a JSON body with the wrong content type',
        request: post('Content-Type: text/plain\r\nContent-Length: 2\r\n', '{}'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'an odd content type',
        request: post('Content-Type: ;;;\r\nContent-Length: 2\r\n', '{}'),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'an empty JSON body',
        request: post('Content-Type: application/json\r\nContent-Length: 0\r\n', ''),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'a body announced over the limit',
        request: post('Content-Type: application/json\r\nContent-Length: 5000000\r\n', '{}'),
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      },
      {
        what: 'no such route',
        request: 'GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        status: 404,
        code: 'NOT_FOUND',
      },
      {
        what: 'a method no route has',
        request: 'PROPFIND /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        status: 404,
        code: 'NOT_FOUND',
      },
      {
        what: 'an Expect other than 100-continue',
        request: 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\n\r\n',
        status: 417,
        code: 'EXPECTATION_FAILED',
      },
      {
        what: 'an Expect other than 100-continue, on a request with a body',
        request: post('Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 200-ok\r\n', '{}'),
        status: 417,
        code: 'EXPECTATION_FAILED',
      },
      {
        what: 'a URL that does not decode',
        request: 'GET /process/instance/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        status: 400,
        code: 'VALIDATION_ERROR',
      },
    ];
    for (const c of cases) {
      const answer = await raw(port, c.request);
      t.equal(answer.status, c.status, `${c.what}: status (${answer.body.slice(0, 200)})`);
      let body: { error?: string; message?: unknown; timestamp?: unknown } = {};
      try {
        body = JSON.parse(answer.body) as typeof body;
      } catch {
        t.fail(`${c.what}: the body is JSON`);
      }
      t.equal(body.error, c.code, `${c.what}: code`);
      t.ok(body.error !== undefined && body.error in ERROR_CODES, `${c.what}: a catalogue code`);
      t.type(body.message, 'string', `${c.what}: a message`);
      t.ok(typeof body.timestamp === 'string' && !Number.isNaN(Date.parse(body.timestamp)), `${c.what}: a timestamp`);
    }
    const health = await fetch(`${daemon.url}/health`);
    t.equal(health.status, 200, 'healthy after');
  },
);
