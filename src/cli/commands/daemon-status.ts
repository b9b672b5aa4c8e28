/* `wfx daemon status`: the daemon of a data directory, its health and store, and what its credential may read: the database's daemons, trigger and worker health. */
import type { Command } from 'commander';
import { runningDaemon } from '../../daemon/process/launcher.js';
import type { ClusterDaemon, DomainHealth, Health, StoreHealth, TriggerHealth } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { dataDirOf, globals, printJson, type CliContext } from '../context.js';
import { daemonElsewhere, elsewhereText } from '../elsewhere.js';
import { EXIT } from '../exit-codes.js';
import { table } from '../format.js';

/** GET /admin/triggers with the CLI's credential, or null when there is none that may read it. */
async function triggerHealth(ctx: CliContext, cmd: Command): Promise<readonly TriggerHealth[] | null> {
  try {
    const client = await clientFor(ctx, cmd);
    return (await client.triggers.list()).items;
  } catch {
    return null;
  }
}

/** GET /jobs/workers with the CLI's credential, or null when there is none that may read it. */
async function workerHealth(ctx: CliContext, cmd: Command): Promise<readonly DomainHealth[] | null> {
  try {
    return (await (await clientFor(ctx, cmd)).jobs.workers()).items;
  } catch {
    return null;
  }
}

/** GET /admin/cluster with the CLI's credential; null without one that may read it, or on the data directory's store. */
async function clusterHealth(ctx: CliContext, cmd: Command): Promise<readonly ClusterDaemon[] | null> {
  try {
    return (await (await clientFor(ctx, cmd)).admin.cluster()).items;
  } catch {
    return null;
  }
}

/** `daemon status`'s table of the daemons on the database: which serves, which stand by. */
function clusterLines(daemons: readonly ClusterDaemon[]): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
  return `  cluster         ${daemons.length} daemon${daemons.length === 1 ? '' : 's'} on the database\n\n${table(
    ['DAEMON', 'URL', 'HOST', 'PID', 'ROLE', 'PARTITIONS', 'LEASE LEFT', 'REPLAY', 'BEHIND', 'SEEN'],
    daemons.map((d) => [
      `${d.id.slice(0, 8)}${d.self ? ' *' : ''}`,
      d.url,
      d.host,
      String(d.pid),
      d.partitions.length > 0 ? 'serving' : 'standby',
      partitionRanges(d.partitions) || '-',
      d.partitions.length > 0 ? seconds(Math.min(...d.partitions.map((p) => p.leaseMsLeft))) : '-',
      d.partitions.length > 0 ? String(d.partitions.reduce((n, p) => n + p.replayEntries, 0)) : '-',
      d.following ? String(d.following.behindEntries) : '-',
      `${seconds(d.seenMsAgo)} ago`,
    ]),
  )}`;
}

/** A daemon's partitions as runs of one epoch: `0-15 (epoch 2)`, `0 (epoch 3), 1-15 (epoch 2)`. */
export function partitionRanges(partitions: ClusterDaemon['partitions']): string {
  const runs: Array<{ first: number; last: number; epoch: number }> = [];
  for (const p of [...partitions].sort((a, b) => a.partition - b.partition)) {
    const run = runs.at(-1);
    if (run && run.last === p.partition - 1 && run.epoch === p.epoch) run.last = p.partition;
    else runs.push({ first: p.partition, last: p.partition, epoch: p.epoch });
  }
  return runs.map((r) => `${r.first === r.last ? r.first : `${r.first}-${r.last}`} (epoch ${r.epoch})`).join(', ');
}

/** Why a daemon stands by, and where it sends requests meanwhile. */
function standbyText(standby: Health['standby']): string {
  if (!standby) return '';
  const where = standby.forwardingTo ? `; forwarding requests to ${standby.forwardingTo}` : '';
  return `: ${standby.reason} (since ${standby.since})${where}`;
}

/** `daemon status`'s store line: the data directory, or PostgreSQL and this daemon's lease on it. */
function storeLine(store: StoreHealth | undefined): string {
  if (store === undefined) return '';
  if (store.kind === 'json') return '  store           the data directory\n';
  const renewed = store.renewedMsAgo === undefined ? '' : `, renewed ${(store.renewedMsAgo / 1000).toFixed(1)}s ago`;
  const lease = store.leaseMs === undefined ? '' : ` (${store.leaseMs / 1000}s${renewed})`;
  return `  store           PostgreSQL, lease epoch ${store.epoch ?? '?'}${lease}\n`;
}

/** The domains section of `daemon status`: jobs waiting and locked, workers, and stalled ones said so. */
function domainLines(domains: readonly DomainHealth[]): string {
  const stalled = domains.filter((d) => d.state === 'stalled').length;
  let out = `  domains         ${domains.length}${stalled ? ` (${stalled} stalled: jobs wait and no worker was seen)` : ''}\n`;
  if (domains.length === 0) return out;
  out += `\n${table(
    ['DOMAIN', 'ORG', 'STATE', 'WAITING', 'LOCKED', 'WORKERS', 'LAST SEEN', 'OLDEST WAITING'],
    domains.map((d) => [
      d.domain,
      d.organization,
      d.state,
      String(d.waiting),
      String(d.locked),
      d.workers.length === 0 ? '-' : d.workers.map((w) => `${w.worker}${w.polling ? '*' : ''}`).join(', '),
      d.lastSeen ?? 'never',
      d.oldestWaiting ?? '-',
    ]),
  )}`;
  return out;
}

export async function status(ctx: CliContext, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const info = await runningDaemon(dataDir);
  if (info === null) {
    const other = await daemonElsewhere(ctx, g);
    if (g.json) printJson(ctx, { running: false, dataDir, ...(other && { elsewhere: other }) });
    else
      ctx.stdout.write(
        `no wfx daemon is running on ${dataDir}\n${other ? `${elsewhereText(other, dataDir)}\nor ` : ''}start one with: wfx daemon start\n`,
      );
    ctx.exitCode = EXIT.UNREACHABLE;
    return;
  }
  let health: Health | { status: 'unreachable'; error: string };
  try {
    // Without a credential and with a deadline of its own; whatever it answers is shown (not the client's errors).
    const res = await fetch(`${info.url}/health`, { signal: AbortSignal.timeout(5000) });
    health = (await res.json()) as Health;
  } catch (err) {
    health = { status: 'unreachable', error: (err as Error).message };
  }
  // Trigger health needs a credential that may read flows; without one the section is left out.
  const triggers = health.status === 'ok' ? await triggerHealth(ctx, cmd) : null;
  const domains = health.status === 'ok' ? await workerHealth(ctx, cmd) : null;
  // On a database: every daemon on it, asked of this one (a standby forwards the question).
  const onDatabase = ('store' in health && health.store?.kind === 'postgres') || health.status === 'standby';
  const cluster = onDatabase ? await clusterHealth(ctx, cmd) : null;
  if (g.json)
    printJson(ctx, {
      running: true,
      ...info,
      health,
      ...(cluster && { cluster }),
      ...(triggers && { triggers }),
      ...(domains && { domains }),
    });
  else {
    ctx.stdout.write(
      `wfx daemon running (pid ${info.pid})\n` +
        `  url             ${info.url}\n` +
        `  health          ${health.status}${standbyText('standby' in health ? health.standby : undefined)}\n` +
        `  version         ${info.version}\n` +
        `  started         ${info.startedAt}\n` +
        `  data directory  ${info.dataDir}\n` +
        storeLine('store' in health ? health.store : undefined),
    );
    const damage = 'history' in health ? health.history : undefined;
    if (damage && damage.findings.length > 0) {
      ctx.stdout.write(
        `  history         ${damage.damagedRecords} damaged record${damage.damagedRecords === 1 ? '' : 's'} (restore from a backup: docs/operations.md)\n`,
      );
      for (const f of damage.findings) ctx.stdout.write(`    ${f.code} ${f.file} at byte ${f.offset}\n`);
    }
    if (cluster) ctx.stdout.write(`${clusterLines(cluster)}\n`);
    if (triggers) {
      const failing = triggers.filter((tr) => tr.state !== 'active').length;
      ctx.stdout.write(`  triggers        ${triggers.length}${failing ? ` (${failing} not active)` : ''}\n`);
      if (triggers.length > 0) {
        ctx.stdout.write(
          `\n${table(
            ['TRIGGER', 'FLOW', 'ENV', 'STATE', 'LAST FIRE', 'NEXT FIRE', 'LAST ERROR'],
            triggers.map((tr) => [
              tr.type === 'schedule'
                ? `schedule ${tr.cron}${tr.timezone && tr.timezone !== 'UTC' ? ` ${tr.timezone}` : ''}`
                : tr.type === 'email'
                  ? `email ${tr.connection ?? ''}`
                  : tr.type === 'webhook'
                    ? `webhook ${tr.webhook ?? ''}`
                    : tr.type === 'execution'
                      ? `execution ${(tr.states ?? []).join(',')}${tr.watchedProcessId ? ` of ${tr.watchedProcessId}` : ''}`
                      : 'on-demand',
              `${tr.flowName} v${tr.version}`,
              tr.environment,
              tr.state,
              tr.lastFire ?? '-',
              tr.nextFire ?? '-',
              tr.lastError ?? '',
            ]),
          )}`,
        );
      }
    }
    if (domains) ctx.stdout.write(`${triggers && triggers.length > 0 ? '\n' : ''}${domainLines(domains)}`);
  }
  // A daemon standing by runs as it should; one that cannot serve (its store failed) does not.
  if (health.status !== 'ok' && health.status !== 'standby') ctx.exitCode = EXIT.UNREACHABLE;
}
