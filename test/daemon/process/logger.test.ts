import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { AccessLogEntry } from '../../../src/daemon/api/auth.js';
import { createDaemonLogger } from '../../../src/daemon/process/logger.js';

t.test(
  'an access-log line is the JSON line pino would write: the same fields, in order, undefined ones left out',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'wfx-logger-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const logFile = join(dir, 'daemon.log');
    const { accessLog, close } = createDaemonLogger({ logFile, foreground: false });
    const entries: AccessLogEntry[] = [
      {
        reqId: 'req-1',
        keyId: '0123456789abcdef',
        subject: undefined,
        organization: 'acme',
        method: 'POST',
        route: '/process/start',
        status: 200,
        ms: 1.25,
      },
      {
        reqId: 'req-2',
        keyId: undefined,
        subject: 'user "quoted" \\ ünï\n',
        organization: null,
        method: 'GET',
        route: undefined,
        status: 404,
        ms: 0,
      },
      {
        reqId: 'req-3',
        keyId: 'k',
        subject: 's',
        organization: 'o',
        method: 'DELETE',
        route: '/admin/keys/:keyId',
        status: 500,
        ms: 12345.67,
      },
    ];
    const before = Date.now();
    for (const e of entries) accessLog(e);
    close();
    const after = Date.now();
    const lines = (await readFile(logFile, 'utf8')).split('\n');
    t.equal(lines.pop(), '', 'each line ends with a newline');
    t.equal(lines.length, entries.length);
    for (const [i, e] of entries.entries()) {
      const parsed = JSON.parse(lines[i]!) as { time: number };
      t.ok(parsed.time >= before && parsed.time <= after, 'time is when it was logged');
      const expected = { level: 30, time: parsed.time, pid: process.pid, hostname: hostname(), ...e, msg: 'request' };
      t.equal(lines[i], JSON.stringify(expected), `line ${i + 1} is byte for byte what JSON.stringify makes`);
    }
  },
);
