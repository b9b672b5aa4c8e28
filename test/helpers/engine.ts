import { COLD_BY_ENV, MemoryCold } from './cold.js';
import type { LocalPrograms } from '../../src/daemon/voice/local-voice.js';
import { createVoiceRunner } from '../../src/daemon/voice/voice-runner.js';
import { FileStore } from '../../src/daemon/files/file-store.js';
import { SecretBox } from '../../src/daemon/secrets/secret-box.js';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { Engine, type EngineOptions, type LifecycleEvent, type StreamedLog } from '../../src/daemon/engine/engine.js';
import { publishFlow } from '../../src/daemon/flows/publish.js';
import { wfxJsonStore } from '../../src/daemon/engine/executions-at-rest.js';
import type { WfxRecord } from '../../src/daemon/state/records.js';
import type { Environment, Execution, WfxState } from '../../src/daemon/state/state.js';
import { History } from '../../src/daemon/store/history.js';
import { Store } from '../../src/daemon/store/store.js';
import { validateFlowSource } from '../../src/shared/flow/validate.js';

/** A flow (for EngineHarness.publish) that waits for message `messageRef`, then ends. */
export const catchFlow = (messageRef: string): string => `
processId: AUTO
name: Wait for ${messageRef}
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: ${messageRef}, next: done }
  done: { type: endEvent }
`;

/** A clock tests move by hand. */
export class TestClock {
  constructor(public ms = Date.parse('2026-11-21T10:00:00.000Z')) {}
  now = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface EngineHarness {
  readonly dir: string;
  readonly store: Store<WfxState, WfxRecord>;
  /** The history under `<dir>/history` (its files' times are the real clock's, not the harness's). */
  readonly history: History;
  readonly engine: Engine;
  /** The cold side (options.cold, WFX_TEST_COLD=1), else null. */
  readonly cold: MemoryCold | null;
  /** The file store under `<dir>/files`, on the harness clock. */
  readonly files: FileStore;
  readonly clock: TestClock;
  /** What the engine reported through onError: a test that expects some empties it (the harness fails a test that leaves any). */
  readonly errors: unknown[];
  readonly events: LifecycleEvent[];
  readonly logs: StreamedLog[];
  /** Publishes a flow given as YAML (processId filled in when the text has `processId: AUTO`). */
  publish(yaml: string, options?: { organization?: string; environment?: Environment }): Promise<string>;
  /** Starts the active version and returns the execution as it is after its first step. */
  start(
    processId: string,
    data?: Record<string, unknown>,
    extra?: { correlationKey?: string; organization?: string },
  ): Promise<Execution>;
  /** The live or archived execution. */
  get(id: string): Promise<Execution>;
  /** Resolves once the execution has moved to history. */
  archived(id: string): Promise<void>;
  /** Lets the steps under way end and be durable (and, cold, evicts every tree at rest). */
  rest(): Promise<void>;
  /** Moves the clock and lets due timers fire. */
  advance(ms: number): void;
  /** Resolves with the first lifecycle event (past or future) that matches. */
  waitFor(match: (e: LifecycleEvent) => boolean): Promise<LifecycleEvent>;
  /** Closes and reopens store and engine on the same directory (a restart), keeping the clock. */
  restart(): Promise<EngineHarness>;
  close(): Promise<void>;
}

/** What a test may give the engine besides its store, history and clock (kept over restarts). */
export type HarnessEngineOptions = Pick<
  EngineOptions,
  'ai' | 'voice' | 'cluster' | 'limits' | 'secrets' | 'bulkRate' | 'observe' | 'executionCache'
> & {
  /** The file store's largest file (default its own). */
  readonly maxFileBytes?: number;
  /** The local speech programs voiceTasks run (default espeak-ng and pocketsphinx on the PATH). */
  readonly voicePrograms?: LocalPrograms;
  /** Trees at rest are evicted before each read (MemoryCold; default: WFX_TEST_COLD=1). */
  readonly cold?: boolean;
  /** The fewest executions the store leaves a directory image of (StoreOptions.imageMin). */
  readonly imageMin?: number;
  /** Past this many segments listed, checkpoints merge some (StoreOptions.maxListedSegments). */
  readonly maxListedSegments?: number;
};

/** Opens store, history and engine in a fresh test directory, closed at teardown. */
export async function engineHarness(
  t: Test,
  dir?: string,
  clock = new TestClock(),
  engineOptions: HarnessEngineOptions = {},
): Promise<EngineHarness> {
  // One secrets key for the harness and its restarts: what it sealed opens again after one.
  if (engineOptions.secrets === undefined) engineOptions = { ...engineOptions, secrets: SecretBox.ephemeral() };
  if (dir === undefined) {
    // Our own directory, not t.testdir(): tap removes that before teardowns run, and closing
    // the store writes a final checkpoint into it. Teardowns run last-registered first, so this
    // removal runs after every close below (restarted harnesses included).
    const own = mkdtempSync(join(tmpdir(), 'wfx-engine-'));
    t.teardown(() => rmSync(own, { recursive: true, force: true }));
    dir = own;
  }
  const root = dir;
  // With an execution cache, the open leaves what a checkpoint wrote unread, as the daemon's does.
  const lazy = engineOptions.executionCache !== undefined;
  const { imageMin, maxListedSegments } = engineOptions;
  const store = await Store.open<WfxState, WfxRecord>({
    dir,
    ...wfxJsonStore(),
    lazy,
    ...(imageMin !== undefined && { imageMin }),
    ...(maxListedSegments !== undefined && { maxListedSegments }),
  });
  const history = await History.open(join(dir, 'history'));
  const errors: unknown[] = [];
  const {
    maxFileBytes,
    voicePrograms,
    cold: coldMode,
    imageMin: _imageMin,
    maxListedSegments: _maxListed,
    ...rest
  } = engineOptions;
  // The engine's, once made (as the daemon wires it): what the sweep reads of executions not in memory.
  let learnColdFiles = (): Promise<boolean> => Promise.resolve(false);
  const files = new FileStore({
    dir: join(dir, 'files'),
    store,
    history,
    retentionMs: 7 * 24 * 60 * 60 * 1000,
    now: clock.now,
    learnColdFiles: () => learnColdFiles(),
    ...(maxFileBytes !== undefined && { maxBytes: maxFileBytes }),
  });
  const voice = voicePrograms && createVoiceRunner({ files, tmpDir: files.tmpDir, programs: voicePrograms });
  const cold = (coldMode ?? COLD_BY_ENV) ? new MemoryCold() : null;
  const engine = new Engine({
    ...(cold && { cold }),
    store,
    history,
    files,
    ...(voice && { voice }),
    now: clock.now,
    onError: (err) => errors.push(err),
    // Every engine test checks that its steps keep to the executions their inputs name.
    checkTouched: true,
    ...rest,
  });
  learnColdFiles = () => engine.executions.learnColdFiles();
  const events: LifecycleEvent[] = [];
  const logs: StreamedLog[] = [];
  engine.on('lifecycle', (e: LifecycleEvent) => events.push(e));
  engine.on('log', (l: StreamedLog) => logs.push(l));
  const archived = new Set<string>();
  engine.on('archived', (id: string) => archived.add(id));
  await engine.recover();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (cold) t.comment(`cold: ${cold.evictions} evicted, ${cold.loads} read back`);
    cold?.restoreAll(store.state);
    await engine.close();
    await store.close();
    await history.close();
    if (errors.length > 0) t.fail(`engine reported errors: ${errors.map(String).join('; ')}`);
  };
  t.teardown(close);
  const h: EngineHarness = {
    errors,
    dir: root,
    store,
    history,
    engine,
    cold,
    files,
    clock,
    events,
    logs,
    async publish(yaml, options = {}) {
      const text = yaml.replace('processId: AUTO', `processId: ${randomUUID()}`);
      const v = validateFlowSource(text);
      if (!v.ok) throw new Error(`test flow does not validate: ${JSON.stringify(v.problems)}`);
      const r = await publishFlow(store, {
        definition: v.flow,
        organization: options.organization ?? 'default',
        environment: options.environment ?? 'PRODUCTION',
        now: clock.now(),
      });
      return r.processId;
    },
    async start(processId, data = {}, extra = {}) {
      const inst = await engine.start({
        processId,
        organization: extra.organization ?? 'default',
        data,
        correlationKey: extra.correlationKey ?? null,
      });
      return h.get(inst.processInstanceId);
    },
    async get(id) {
      await settle();
      const inst = await engine.getInstance({ organization: null }, id);
      if (!inst) throw new Error(`no execution ${id}`);
      return inst;
    },
    archived(id) {
      if (archived.has(id)) return Promise.resolve();
      return new Promise((resolve) => {
        const on = (done: string) => {
          if (done !== id) return;
          engine.off('archived', on);
          resolve();
        };
        engine.on('archived', on);
      });
    },
    rest: () => settle(),
    advance(ms) {
      clock.advance(ms);
      engine.pokeTimers();
    },
    waitFor(match) {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const on = (e: LifecycleEvent) => {
          if (!match(e)) return;
          engine.off('lifecycle', on);
          resolve(e);
        };
        engine.on('lifecycle', on);
      });
    },
    async restart() {
      await close();
      return engineHarness(t, root, clock, engineOptions);
    },
    close,
  };
  /** Lets deferred steps, timers due now and archiving run. */
  async function settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    await store.flush();
    cold?.evictAtRest(store.state);
  }
  return h;
}

/** `nodeId:statusCd` of every node instance, in creation order. */
export function trail(inst: Execution): string[] {
  return Object.values(inst.nodes).map((n) => `${n.nodeId}:${n.statusCd}`);
}

/** Waits until the execution `id` ends (work and model calls run outside the engine's steps), then reads it. */
export async function ended(h: EngineHarness, id: string): Promise<Execution> {
  await h.waitFor((e) => e.processInstanceId === id && /^PROCESS_(COMPLETED|FAILED|CANCELLED)$/.test(e.type));
  return h.get(id);
}

/**
 * A copy of the harness's data directory as a crash would leave it (every commit durable,
 * nothing closed), removed when `t` ends.
 */
export async function crashImage(t: Test, h: EngineHarness): Promise<string> {
  await h.store.flush();
  const dir = mkdtempSync(join(tmpdir(), 'wfx-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(h.dir, dir, { recursive: true });
  return dir;
}

/**
 * A flow whose executions end at once (`mode: 'ok'`), fail at once with NO_BRANCH_MATCHED
 * (any other mode), or wait for input (`mode: 'wait'`): what the lists of executions are tested
 * and measured over.
 */
export const ordersFlow = (processId = 'AUTO', name = 'Orders'): string => `processId: ${processId}
name: ${name}
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches:
      - { condition: "\${mode == 'ok'}", next: done }
      - { condition: "\${mode == 'wait'}", next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
