/**
 * The process's open-files limit, and how many connections the daemon serves by default under
 * it: every socket is a file descriptor, and the store must always be able to open a file (a
 * journal segment, a snapshot, a history bucket) whatever the clients do.
 */
import { readFileSync } from 'node:fs';

/** Descriptors kept for everything but connections: the store, history, files, triggers, outgoing calls, workers. */
const MIN_RESERVE = 128;
/** The default never serves more connections than this, whatever the limit: each one costs heap as well as a descriptor. */
const MAX_DEFAULT_CONNECTIONS = 10_000;
/** The default where the limit cannot be read (not Linux). */
const FALLBACK_CONNECTIONS = 1_000;
/** Fewest connections a default gives, however low the limit. */
const MIN_CONNECTIONS = 8;

/**
 * The soft "Max open files" limit in the text of /proc/self/limits, or null when the text has
 * no such line or says "unlimited". Pure.
 */
export function parseOpenFilesLimit(limits: string): number | null {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  if (!line || !/^\d+$/.test(line[1]!)) return null;
  const soft = Number(line[1]);
  return Number.isSafeInteger(soft) && soft > 0 ? soft : null;
}

/**
 * This process's soft open-files limit, read from /proc/self/limits (Linux; Node has raised it
 * to the hard limit at start), or null where it cannot be read.
 */
export function readOpenFilesLimit(path = '/proc/self/limits'): number | null {
  try {
    return parseOpenFilesLimit(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Descriptors of `openFiles` kept out of the connections' reach: a quarter of the limit, at
 * least MIN_RESERVE. Pure.
 */
export function descriptorReserve(openFiles: number): number {
  return Math.max(MIN_RESERVE, Math.ceil(openFiles / 4));
}

/**
 * Connections a daemon serves at once by default under an open-files limit of `openFiles`
 * (null: unknown): the limit less the reserve and the connections answered over it
 * (`overflowConnections`), at most MAX_DEFAULT_CONNECTIONS, at least MIN_CONNECTIONS. Pure.
 */
export function defaultMaxConnections(openFiles: number | null): number {
  if (openFiles === null) return FALLBACK_CONNECTIONS;
  const room = openFiles - descriptorReserve(openFiles);
  // served + overflowConnections(served) <= room, overflow being about a sixteenth of served.
  let served = Math.min(MAX_DEFAULT_CONNECTIONS, Math.floor((room * 16) / 17));
  while (served > MIN_CONNECTIONS && served + overflowConnections(served) > room) served--;
  return Math.max(MIN_CONNECTIONS, served);
}

/**
 * Connections accepted beyond `maxConnections` only to be answered TOO_MANY_CONNECTIONS (a
 * sixteenth of them, 1 to 64): a client over the limit gets an answer it can act on rather than
 * a bare reset; beyond those, a connection is reset as soon as it is accepted. Pure.
 */
export function overflowConnections(maxConnections: number): number {
  return Math.min(64, Math.max(1, Math.floor(maxConnections / 16)));
}
