/**
 * Foreseeable reasons a daemon cannot start, as catalogue errors: a data directory that cannot be
 * written, an address that cannot be listened on. They are the environment's problem, not a bug,
 * so the CLI prints their code and a hint and exits 1, never with a stack.
 */
import { WfxError } from '../../shared/errors.js';
import { portHolder } from './port-holder.js';

/** fs error codes that mean the data directory (or the disk under it) cannot be used as one. */
const DATA_DIR_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'EDQUOT',
  'ENOTDIR',
  'EISDIR',
  'ELOOP',
  'ENAMETOOLONG',
  'EEXIST',
  'EIO',
]);

/**
 * `err` as DATA_DIR_INVALID when it is an fs error of the data directory `dataDir` (read-only,
 * full, not a directory, not permitted); any other error, WfxErrors included, unchanged.
 */
export function dataDirError(err: unknown, dataDir: string): unknown {
  if (err instanceof WfxError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !DATA_DIR_CODES.has(code)) return err;
  return new WfxError('DATA_DIR_INVALID', `cannot use ${dataDir} as a data directory: ${(err as Error).message}`, {
    details: { dataDir, errno: code },
  });
}

/**
 * `err`, from listening on `host:port`, as PORT_IN_USE (naming who holds the port when that can
 * be found) or LISTEN_FAILED (an address that is not local, a privileged port, a host name that
 * does not resolve); any other error unchanged.
 */
export async function listenError(err: unknown, host: string, port: number): Promise<unknown> {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') {
    const holder = await portHolder(port);
    const by = holder?.daemon
      ? `: the wfx daemon (pid ${holder.pid}) of data directory ${holder.daemon.dataDir} listens there (${holder.daemon.url})`
      : holder
        ? `: pid ${holder.pid} listens there (${holder.command})`
        : '';
    return new WfxError('PORT_IN_USE', `cannot listen on ${address}, the port is in use${by}`, {
      details: {
        host,
        port,
        ...(holder && { pid: holder.pid }),
        ...(holder?.daemon && { dataDir: holder.daemon.dataDir }),
      },
    });
  }
  const why: Record<string, string> = {
    EADDRNOTAVAIL: "the address is not one of this machine's",
    EACCES: 'not permitted (a port below 1024 needs privileges)',
    EPERM: 'not permitted',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name does not resolve',
    EAFNOSUPPORT: 'the address family is not supported',
  };
  if (typeof code === 'string' && why[code]) {
    return new WfxError('LISTEN_FAILED', `cannot listen on ${address}: ${why[code]}`, {
      details: { host, port, errno: code },
    });
  }
  return err;
}
