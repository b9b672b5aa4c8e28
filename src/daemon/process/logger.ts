import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { AccessLogEntry } from '../api/auth.js';
import { LogFile } from './log-file.js';

/**
 * The daemon's structured log: JSON lines to `logFile` (created 0600), and in the foreground
 * also readable lines on stdout. Secrets are never passed to it; the redact list is a second
 * line of defence for headers that carry them. `close` writes what the file holds and closes
 * it (at stop).
 */
export function createDaemonLogger(options: {
  logFile: string;
  foreground: boolean;
  level?: string;
  color?: boolean;
}): {
  logger: Logger;
  /** Writes an access-log line to the file (the terminal never shows them), as pino would have. */
  accessLog: (entry: AccessLogEntry) => void;
  close: () => void;
} {
  // Lines are written in chunks (see LogFile). The error goes to stderr (logs/daemon.out in the background) with a plain write: a stream
  // would raise an uncaught 'error' if that file is on the same full disk.
  const file = new LogFile(options.logFile, {
    onError: (err) => writeSync(2, `wfx: cannot write the daemon log ${options.logFile}: ${err.message}\n`),
  });
  const level = options.level ?? 'info';
  // Each stream takes the logger's level: a multistream entry without one stops at info.
  const streams: pino.StreamEntry[] = [{ stream: file, level: level as pino.Level }];
  if (options.foreground) {
    // Loaded only here: a background daemon prints nothing to a terminal, and loading the
    // module slowed every daemon start (docs/decisions/019-restart-path.md).
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    const terminal = pretty({
      colorize: options.color ?? (process.stdout.isTTY === true && !process.env.NO_COLOR),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      destination: 1,
      sync: true,
    });
    // The access log (one line per request) stays in the file: on a terminal it would flood the
    // screen, and pretty-printing it was dear under load
    // (docs/decisions/009-http-per-request-costs.md).
    streams.push({
      level: level as pino.Level,
      stream: { write: (line: string) => (line.includes('"msg":"request"') ? true : terminal.write(line)) },
    });
  }
  const logger = pino(
    {
      level,
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'secret', 'password'],
        censor: '[redacted]',
      },
    },
    streams.length === 1 ? file : pino.multistream(streams),
  );
  // The access log, one line per authenticated request, skips pino: the same JSON line (fields
  // in pino's order, undefined ones left out as JSON.stringify would) built from a constant head
  // and each field's own JSON: cheaper than pino's child logger per request and its line
  // building, and than one JSON.stringify of the whole line
  // (docs/decisions/009-http-per-request-costs.md).
  const head = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":`;
  const accessLog = (e: AccessLogEntry): void => {
    if (!logger.isLevelEnabled('info')) return;
    let line = `{"level":30,"time":${Date.now()}${head}${JSON.stringify(e.reqId)}`;
    if (e.keyId !== undefined) line += `,"keyId":${JSON.stringify(e.keyId)}`;
    if (e.subject !== undefined) line += `,"subject":${JSON.stringify(e.subject)}`;
    line += `,"organization":${JSON.stringify(e.organization)},"method":${JSON.stringify(e.method)}`;
    if (e.route !== undefined) line += `,"route":${JSON.stringify(e.route)}`;
    file.write(`${line},"status":${e.status},"ms":${JSON.stringify(e.ms)},"msg":"request"}\n`);
  };
  return { logger, accessLog, close: () => file.close() };
}
