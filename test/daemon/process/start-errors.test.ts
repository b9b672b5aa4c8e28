import { createServer } from 'node:net';
import t from 'tap';
import { isWfxError, WfxError } from '../../../src/shared/errors.js';
import { portHolder } from '../../../src/daemon/process/port-holder.js';
import { dataDirError, listenError } from '../../../src/daemon/process/start-errors.js';

const errno = (code: string) => Object.assign(new Error(`${code}: something`), { code });

t.test('fs errors of the data directory are DATA_DIR_INVALID; anything else is left as it is', async (t) => {
  for (const code of ['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOTDIR', 'EISDIR']) {
    const err = dataDirError(errno(code), '/d');
    t.ok(isWfxError(err, 'DATA_DIR_INVALID'), code);
    t.match((err as WfxError).details, { dataDir: '/d', errno: code });
  }
  const bug = new TypeError('x is undefined');
  t.equal(dataDirError(bug, '/d'), bug, 'a bug stays a bug');
  t.equal(
    dataDirError(errno('ENOENT'), '/d') instanceof WfxError,
    false,
    'ENOENT is no environment problem of the directory',
  );
  const locked = new WfxError('DATA_DIR_LOCKED', 'held');
  t.equal(dataDirError(locked, '/d'), locked, 'a WfxError passes through');
});

t.test(
  'listen errors: EACCES, EADDRNOTAVAIL and an unresolvable host are LISTEN_FAILED (decided in-process, nothing is sent)',
  async (t) => {
    for (const code of ['EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAFNOSUPPORT']) {
      const err = await listenError(errno(code), '10.0.0.1', 80);
      t.ok(isWfxError(err, 'LISTEN_FAILED'), code);
      t.match((err as WfxError).message, '10.0.0.1:80');
    }
    t.match(
      ((await listenError(errno('EACCES'), '::1', 80)) as WfxError).message,
      '[::1]:80',
      'an IPv6 address in brackets',
    );
    const other = new Error('boom');
    t.equal(await listenError(other, '127.0.0.1', 1), other);
  },
);

t.test('EADDRINUSE is PORT_IN_USE, naming this process when it holds the port (Linux)', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const err = (await listenError(errno('EADDRINUSE'), '127.0.0.1', port)) as WfxError;
  t.equal(err.code, 'PORT_IN_USE');
  t.match(err.message, `127.0.0.1:${port}`);
  if (process.platform === 'linux') {
    t.match(await portHolder(port), { pid: process.pid, command: String });
    t.match(err.details, { port, pid: process.pid });
  }
  t.equal(await portHolder(0), null, "port 0 is nobody's");
});
