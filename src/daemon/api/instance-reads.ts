/**
 * Executions as the routes read them. A finished execution is read from history and its document
 * parsed whole, into a copy as large as its log: the readers of one execution share that read,
 * and that copy for as long as one of them uses it (a log stream, to its end), so several clients
 * replaying one long log parse it once and hold it once. A live execution is never shared this
 * way: each step that resumes it replaces its object, so every read takes the one live now.
 */
import { WfxError } from '../../shared/errors.js';
import type { Engine } from '../engine/engine.js';
import type { Executions } from '../state/executions.js';
import type { Execution } from '../state/state.js';
import type { Caller } from './caller.js';

/** An execution read, and the release of the reader's hold on it. */
export interface HeldInstance {
  readonly inst: Execution;
  /** Says this reader is done with `inst`; the second and later calls do nothing. */
  readonly release: () => void;
}

/** The executions the routes read, each read once however many readers hold it. */
export class InstanceReads {
  private readonly held = new Map<string, { readonly read: Promise<Execution | null>; users: number }>();

  private readonly executions: Executions;

  constructor(private readonly engine: Engine) {
    this.executions = engine.executions;
  }

  /**
   * The execution `id` if `caller` may see it, held until `release` (the routes only read it).
   * Throws WfxError INSTANCE_NOT_FOUND (another organization's is not found either), or what the
   * read throws (HISTORY_DAMAGED).
   */
  async hold(caller: Pick<Caller, 'organization'>, id: string): Promise<HeldInstance> {
    const loading = this.executions.ensure([id]);
    if (loading !== null) await loading;
    const live = this.executions.get(id);
    if (live) {
      if (caller.organization !== null && live.organization !== caller.organization)
        throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${id}`);
      return { inst: live, release: () => undefined };
    }
    let entry = this.held.get(id);
    if (!entry) {
      entry = { read: this.engine.getInstance({ organization: null }, id), users: 0 };
      this.held.set(id, entry);
    }
    entry.users++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--entry.users === 0 && this.held.get(id) === entry) this.held.delete(id);
    };
    try {
      const inst = await entry.read;
      if (!inst || (caller.organization !== null && inst.organization !== caller.organization))
        throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${id}`);
      return { inst, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Executions held now, for tests of leaks. */
  get size(): number {
    return this.held.size;
  }
}
