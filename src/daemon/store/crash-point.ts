import { writeSync } from 'node:fs';

/**
 * The one point a crash test asks the daemon to stop at (`WFX_TEST_CRASH_POINT`), read once: a
 * check costs a comparison. Unset outside tests.
 */
const STOP_AT = process.env.WFX_TEST_CRASH_POINT;

/** Whether a crash test named a point: a caller whose check of its point costs more than a comparison tests this first. */
export const CRASH_POINT_SET = STOP_AT !== undefined;

/** How long a process stopped at its crash point waits to be killed before going on. */
const STOP_MS = 60_000;

/**
 * For crash tests: when `name` is the point named by `WFX_TEST_CRASH_POINT`, prints
 * `crash-point <name>` on stdout and blocks the whole process (no timer, no I/O completes)
 * until the test's SIGKILL, so the kill lands exactly there rather than at a random moment.
 * Does nothing otherwise. Names: checkpoint:synced, checkpoint:pending, checkpoint:renamed,
 * checkpoint:named, roll:created, recovery:replayed, image:closing (a close's directory image
 * written under its temporary name, not renamed), image:refreshed (the same, of an image the
 * process of segments/image-worker.ts writes while the daemon runs: only that process stops); backup:snapshot, backup:journal
 * (a segment copied in part), backup:released, backup:synced (whole, under its partial name),
 * backup:renamed (src/daemon/backup.ts); agent:tools-ended (the engine:
 * a callAgent's tool results are durable, its next model turn not yet asked); trigger:started
 * (an execution's end and the start its execution trigger made are durable, nothing of that
 * start run yet); thrown:kept (an
 * event thrown is durable, the other daemons sharing the database not given it yet);
 * secrets:pinned (a rotation's new key is current, no secret sealed with it yet), secrets:resealed
 * (secrets sealed again, their old forms still in the journal: no checkpoint yet); project:planned
 * (a deploy's plan made, none of it written), project:committed (all of it durable, not answered).
 */
export function crashPoint(name: string): void {
  if (STOP_AT !== name) return;
  writeSync(1, `crash-point ${name}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STOP_MS);
}
