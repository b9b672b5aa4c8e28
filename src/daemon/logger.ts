import { writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AccessLogEntry } from './api/auth.js';
import { LogFile } from './log-file.js';

/**
 * The daemon's structured log: JSON lines to `logFile` (created 0600), and in the foreground
 * also readable lines on stdout. Secrets are never passed to it; the redact list is a second
 * line of defence for headers that carry them. `close` writes what the file holds and closes
 * it (at stop).
 */
export function createDaemonLogger(options: { logFile: string; foreground: boolean; level?: string; color?: boolean }): {
  logger: Logger;
  /** Writes an access-log line to the file (the terminal never shows them), as pino would have. */
  accessLog: (entry: AccessLogEntry) => void;
  close: () => void;
} {
  // Lines are written in chunks (see LogFile). The error goes to stderr (logs/daemon.out in the background) with a plain write: a stream
  // would raise an uncaught 'error' if that file is on the same full disk.
  const file = new LogFile(options.logFile, { onError: (err) => writeSync(2, `wfx: cannot write the daemon log ${options.logFile}: ${err.message}\n`) });
  const level = options.level ?? 'info';
  // Each stream takes the logger's level: a multistream entry without one stops at info.
  const streams: pino.StreamEntry[] = [{ stream: file, level: level as pino.Level }];
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
    streams.push({ level: level as pino.Level, stream: { write: (line: string) => (line.includes('"msg":"request"') ? true : terminal.write(line)) } });
  }
  const logger = pino(
    {
      level,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    streams.length === 1 ? file : pino.multistream(streams),
  );
  // The access log, one line per authenticated request, skips pino: the same JSON line built
  // in one JSON.stringify, where pino's child logger per request and its line building were
  // 5 % of what the daemon allocated under load.
  const pid = process.pid;
  const host = hostname();
  const accessLog = (e: AccessLogEntry): void => {
    if (!logger.isLevelEnabled('info')) return;
    const line = {
      level: 30,
      time: Date.now(),
      pid,
      hostname: host,
      reqId: e.reqId,
      keyId: e.keyId,
      subject: e.subject,
      organization: e.organization,
      method: e.method,
      route: e.route,
      status: e.status,
      ms: e.ms,
      msg: 'request',
    };
    file.write(`${JSON.stringify(line)}\n`);
  };
  return { logger, accessLog, close: () => file.close() };
}
