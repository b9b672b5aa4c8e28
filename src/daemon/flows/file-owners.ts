/**
 * Which flow file each processId was last published from by the daemon itself (`--flows` at
 * start, `wfx dev` on each change), so that a second file with the same processId is refused
 * instead of replacing the first's active version on every save of either. A file that no longer
 * has that processId (edited, renamed, deleted) gives it up.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

export class FlowFileOwners {
  /** processId -> the file it was published from. */
  private readonly byProcessId = new Map<string, string>();

  /**
   * Claims `processId` for `file`: null when it is `file`'s now, else the other file that still
   * has it (then nothing changes). A file that claims another processId gives up its old one.
   */
  async claim(file: string, processId: string): Promise<string | null> {
    const owner = this.byProcessId.get(processId);
    if (owner !== undefined && owner !== file && (await processIdOf(owner)) === processId) return owner;
    for (const [id, f] of this.byProcessId) if (f === file && id !== processId) this.byProcessId.delete(id);
    this.byProcessId.set(processId, file);
    return null;
  }
}

/** The processId a flow file has now; null when it cannot be read or has none. */
async function processIdOf(file: string): Promise<string | null> {
  try {
    // YAML reads JSON too.
    const value = parse(await readFile(file, 'utf8')) as { processId?: unknown } | null;
    return typeof value?.processId === 'string' ? value.processId : null;
  } catch {
    return null;
  }
}
