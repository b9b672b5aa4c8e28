/* The child executions an execution page shows inside opened containers, read when named and while they run. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { InstanceView } from '../../shared/api/process.js';
import { calls } from '../../shared/api/calls/index.js';
import { send } from '../api/http.js';

/**
 * The executions `wanted` names given those read so far (a body's run names the runs of the
 * bodies opened inside it), each read once named and again whenever `version` changes while it
 * runs. Runs no longer named are kept: a body closed and opened again shows at once.
 */
export function useRuns(
  wanted: (runs: Readonly<Record<string, InstanceView>>) => readonly string[],
  version: number,
): Readonly<Record<string, InstanceView>> {
  const [runs, setRuns] = useState<Readonly<Record<string, InstanceView>>>({});
  const reading = useRef(new Set<string>());
  const ids = wanted(runs);
  const key = ids.join(' ');
  useEffect(() => {
    for (const id of ids) {
      const known = runs[id];
      if (reading.current.has(id) || (known && known.state !== 'RUNNING')) continue;
      reading.current.add(id);
      send(calls.instances.get(id))
        .then((run) => setRuns((r) => ({ ...r, [id]: run })))
        .catch(() => undefined)
        .finally(() => reading.current.delete(id));
    }
    // Not on `runs`: a run read must not start another read of itself.
  }, [key, version]);
  return runs;
}
