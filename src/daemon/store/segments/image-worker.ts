/**
 * The worker thread that writes a directory image while the daemon runs (ExecutionSegments,
 * `refreshImage`): it loads the indexes of the segments it is given into a directory of its own,
 * exactly as an open without an image does, takes the image of that directory and writes it.
 * At 1,000,000 executions that load is a second or more of CPU: here it does not stall the
 * daemon's event loop. It answers with the segments the image covers, or why it wrote none.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ExecutionDirectory } from '../../state/directory/directory.js';
import { REFRESH_TEMPORARY, takeImage, writeImage, type Covered } from './directory-image.js';
import { loadSegmentsInto } from './load.js';
import { SegmentSpace } from './space.js';

/** What the worker is started with. */
export interface ImageJob {
  /** The segments' folder. */
  readonly dir: string;
  /** The listed segments, oldest first: the image covers all of them. */
  readonly listed: readonly number[];
}

/** What it answers. */
export type ImageAnswer = { readonly covered: Covered[] } | { readonly error: string };

async function run(job: ImageJob): Promise<ImageAnswer> {
  const space = new SegmentSpace();
  const directory = new ExecutionDirectory();
  await loadSegmentsInto(job.dir, job.listed, space, directory);
  const covered = job.listed.map((segment) => {
    const s = space.get(segment)!;
    return { segment, bytes: s.bytes, dead: s.dead };
  });
  await writeImage(job.dir, takeImage(directory, covered), 'image:refreshed', REFRESH_TEMPORARY);
  return { covered };
}

run(workerData as ImageJob).then(
  (answer) => parentPort!.postMessage(answer),
  // A segment removed meanwhile (a later checkpoint compacted it away) ends up here too.
  (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
);
