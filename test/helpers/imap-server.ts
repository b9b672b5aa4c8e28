import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import type { Test } from 'tap';
import { eventually } from './eventually.js';

/** Whether Dovecot is installed (.ci/run installs it; a developer may not have it). */
export const HAVE_DOVECOT = spawnSync('dovecot', ['--version']).status === 0;

export interface ImapServer {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** Delivers a message into INBOX with IMAP APPEND. */
  append(raw: string): Promise<void>;
  /** The flags of every message of INBOX, in UID order. */
  flags(): Promise<string[][]>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** The processes descended from `pid` (Linux: /proc; elsewhere none). */
function descendants(pid: number): number[] {
  if (process.platform !== 'linux') return [];
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const under = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parentOf)
      if (under.has(parent) && !under.has(child)) {
        under.add(child);
        found.push(child);
        grew = true;
      }
  }
  return found;
}

/** Sends `sig` to `pid` if it still runs. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** Whether `pid` runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** A free TCP port on 127.0.0.1 (Dovecot cannot report one it picked itself). */
async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, 'close');
  return port;
}

/**
 * A real Dovecot IMAP server on 127.0.0.1 with one user, its own config, mail and run
 * directories in a temp dir; stopped and removed at teardown. Runs as root as CI does, with mail
 * owned by the `dovecot` user the Debian package creates.
 */
export async function startImapServer(t: Test, options: { readonly password?: string } = {}): Promise<ImapServer> {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-imap-'));
  chmodSync(dir, 0o755); // Dovecot's auth and mail processes run as its own users: they must get in
  const port = await freePort();
  const user = 'wfx';
  const password = options.password ?? 'imap-secret';
  for (const d of ['run', 'state', 'mail']) mkdirSync(join(dir, d), { recursive: true });
  const dovecotUser = spawnSync('id', ['-u', 'dovecot']).stdout.toString().trim();
  const dovecotGroup = spawnSync('id', ['-g', 'dovecot']).stdout.toString().trim();
  chownSync(join(dir, 'mail'), Number(dovecotUser), Number(dovecotGroup));
  writeFileSync(join(dir, 'users'), `${user}:{PLAIN}${password}\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = wfx-test-${port}
log_path = ${dir}/dovecot.log
protocols = imap
first_valid_uid = 1
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# IDLE looks at the mailbox this often besides inotify (default 30 s): new mail shows at once.
mailbox_idle_check_interval = 1 secs
mail_location = maildir:${dir}/mail/%u
default_internal_user = dovecot
default_login_user = dovenull
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=${dir}/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`,
  );
  let child: ChildProcess | null = null;

  const start = async () => {
    rmSync(join(dir, 'run'), { recursive: true, force: true });
    mkdirSync(join(dir, 'run'));
    child = spawn('dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
    // Ready when it accepts connections.
    const accepts = () =>
      new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
    await eventually(`dovecot accepts connections (see ${dir}/dovecot.log)`, accepts);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    // Its processes serving connections outlive the master by seconds, keeping them open: stopped
    // with it, the server is gone for its clients as a stopped server is.
    const serving = descendants(c.pid!);
    const exited = once(c, 'exit');
    c.kill('SIGTERM');
    await exited;
    for (const pid of serving) signal(pid, 'SIGTERM');
    await eventually("the IMAP server's processes are gone", () => serving.every((pid) => !alive(pid)));
  };
  const client = () =>
    new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      doSTARTTLS: false,
      auth: { user, pass: password },
      logger: false,
    });

  await start();
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    port,
    user,
    password,
    start,
    stop,
    async append(raw) {
      const c = client();
      await c.connect();
      await c.append('INBOX', raw);
      await c.logout();
    },
    async flags() {
      const c = client();
      await c.connect();
      await c.mailboxOpen('INBOX');
      const out: string[][] = [];
      for await (const m of c.fetch('1:*', { flags: true, uid: true })) out.push([...(m.flags ?? [])].sort());
      await c.logout();
      return out;
    },
  };
}

/** An RFC 5322 message. */
export function mail(opts: {
  id: string;
  subject: string;
  from?: string;
  to?: string;
  body?: string;
  /** Attachments: a multipart/mixed message, each part base64. */
  attachments?: ReadonlyArray<{ name: string; type: string; content: Buffer }>;
}): string {
  if (opts.attachments) {
    const b = 'wfx-boundary';
    return [
      `From: ${opts.from ?? 'Alice <alice@example.com>'}`,
      `To: ${opts.to ?? 'orders@example.com'}`,
      `Subject: ${opts.subject}`,
      `Message-ID: <${opts.id}@example.com>`,
      'Date: Sat, 21 Nov 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      opts.body ?? 'Hello',
      ...opts.attachments.flatMap((a) => [
        `--${b}`,
        `Content-Type: ${a.type}; name="${a.name}"`,
        `Content-Disposition: attachment; filename="${a.name}"`,
        'Content-Transfer-Encoding: base64',
        '',
        a.content.toString('base64'),
      ]),
      `--${b}--`,
      '',
    ].join('\r\n');
  }
  return [
    `From: ${opts.from ?? 'Alice <alice@example.com>'}`,
    `To: ${opts.to ?? 'orders@example.com'}`,
    `Subject: ${opts.subject}`,
    `Message-ID: <${opts.id}@example.com>`,
    'Date: Sat, 21 Nov 2026 10:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    opts.body ?? 'Hello',
    '',
  ].join('\r\n');
}
