import { Writable } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import t from 'tap';
import { lazyChildLogger } from '../../../src/daemon/api/request-logger.js';

/** A pino logger writing JSON lines into `lines`, and a count of the children made from it. */
function capture(): { logger: FastifyBaseLogger; lines: Array<Record<string, unknown>>; children: () => number } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, stream);
  let made = 0;
  const child = logger.child;
  // On the root only: pino's children inherit it, and `this` keeps each one's bindings.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    made++;
    return child.apply(this, args);
  } as typeof child;
  return { logger, lines, children: () => made };
}

t.test('a request logger makes its child only when something is logged, with the bindings it was given', async (t) => {
  const { logger, lines, children } = capture();
  const log = lazyChildLogger(logger, { reqId: 'req-1' }, {});
  t.equal(log.level, 'info', 'its level is readable without a child');
  t.equal(children(), 0, 'no child made yet');
  log.debug('below the level');
  t.equal(children(), 1, 'made on the first call');
  log.warn({ extra: 1 }, 'first');
  log.error(new Error('boom'));
  t.equal(children(), 1, 'and only once');
  await new Promise((resolve) => setImmediate(resolve));
  t.match(lines, [
    { level: 40, reqId: 'req-1', extra: 1, msg: 'first' },
    { level: 50, reqId: 'req-1', err: { message: 'boom' } },
  ]);
  const grandchild = log.child({ part: 'x' });
  grandchild.info('nested');
  await new Promise((resolve) => setImmediate(resolve));
  t.match(lines.at(-1), { reqId: 'req-1', part: 'x', msg: 'nested' }, 'a child of it keeps its bindings');
});

t.test('in Fastify: requests that log nothing make no child; a request that logs has its request id', async (t) => {
  const { logger, lines, children } = capture();
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
  });
  t.teardown(() => app.close());
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (request) => {
    request.log.warn('something to say');
    return { ok: true };
  });
  await app.ready();
  const before = children(); // Fastify makes its own logger a child of the one it is given
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ method: 'GET', url: '/quiet' })).statusCode, 200);
  t.equal(children() - before, 0, 'five quiet requests, no child logger');
  t.equal((await app.inject({ method: 'GET', url: '/loud' })).statusCode, 200);
  t.equal(children() - before, 1, 'one for the request that logged');
  await new Promise((resolve) => setImmediate(resolve));
  t.match(lines.at(-1), { level: 40, reqId: /^req-/, msg: 'something to say' });
});
