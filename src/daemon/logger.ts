import { closeSync, openSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { FILE_MODE } from './store/fs-util.js';

/**
 * The daemon's structured log: JSON lines to `logFile` (created 0600), and in the foreground
 * also readable lines on stdout. Secrets are never passed to it; the redact list is a second
 * line of defence for headers that carry them. `flushSync` writes what the file stream holds.
 */
export function createDaemonLogger(options: { logFile: string; foreground: boolean; level?: string; color?: boolean }): { logger: Logger; flushSync: () => void } {
  closeSync(openSync(options.logFile, 'a', FILE_MODE)); // pino would create it world-readable
  // Lines are written 4 KiB at a time, and at least every 250 ms (and by flushSync, on stop):
  // one write per access-log line cost 6 % of the daemon's main thread under load. A crash that
  // gives no chance to flush (SIGKILL) loses at most those 250 ms of log; never journaled state.
  const file = pino.destination({ dest: options.logFile, sync: false, minLength: 4096, periodicFlush: 250 });
  const streams: pino.StreamEntry[] = [{ stream: file }];
  if (options.foreground) {
    const terminal = pretty({
      colorize: options.color ?? (process.stdout.isTTY === true && !process.env.NO_COLOR),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      destination: 1,
      sync: true,
    });
    // The access log (one line per request) stays in the file: on a terminal it would flood the
    // screen, and pretty-printing it cost 14 % of the CPU under load.
    streams.push({ stream: { write: (line: string) => (line.includes('"msg":"request"') ? true : terminal.write(line)) } });
  }
  const logger = pino(
    {
      level: options.level ?? 'info',
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    pino.multistream(streams),
  );
  // pino's logger.flush() does nothing through a multistream: write the file's buffer here.
  const flushSync = (): void => {
    try {
      file.flushSync();
    } catch {
      // not open yet, or already closed: nothing buffered to lose
    }
  };
  return { logger, flushSync };
}
