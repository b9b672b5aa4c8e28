/**
 * The process that writes a directory image while the daemon runs (image-refresh.ts): it loads
 * the indexes of the segments it is given into a directory of its own, exactly as an open
 * without an image does, takes the image of that directory and writes it. That load costs the
 * CPU and memory such an open costs, both growing with the executions that wait: in a process of
 * its own, at a lower priority, it neither stalls the daemon's event loop nor leaves the daemon's
 * memory grown (docs/decisions/084-directory-image-refreshed-after-checkpoints.md). It answers over IPC with the segments the image covers, or why it
 * wrote none, and exits; it exits too when its daemon goes (the IPC channel closes).
 */
import { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import { REFRESH_TEMPORARY, takeImage, writeImage, type Covered } from './directory-image.js';
import { loadSegmentsInto } from './load.js';
import { SegmentSpace } from './space.js';

/** What the worker is started with. */
export interface ImageJob {
  /** The segments' folder. */
  readonly dir: string;
  /** The listed segments, oldest first: the image covers all of them. */
  readonly listed: readonly number[];
  /** How many live executions they hold, as the daemon counts them: the directory's room. */
  readonly live: number;
}

/** What it answers. */
export type ImageAnswer = { readonly covered: Covered[] } | { readonly error: string };

async function run(job: ImageJob): Promise<ImageAnswer> {
  const space = new SegmentSpace();
  const directory = new ExecutionIndex();
  await loadSegmentsInto(job.dir, job.listed, space, directory, job.live);
  const covered = job.listed.map((segment) => {
    const s = space.get(segment)!;
    return { segment, bytes: s.bytes, dead: s.dead };
  });
  await writeImage(job.dir, takeImage(directory, covered), 'image:refreshed', REFRESH_TEMPORARY);
  return { covered };
}

process.once('disconnect', () => process.exit(0));
run(JSON.parse(process.argv[2]!) as ImageJob)
  // A segment removed meanwhile (a later checkpoint compacted it away) ends up here too.
  .catch((err: unknown): ImageAnswer => ({ error: err instanceof Error ? err.message : String(err) }))
  .then((answer) => process.send!(answer, () => process.exit(0)));
