/**
 * Kept messages consumed once across daemons sharing a database (decision 043). Every daemon
 * sees the kept messages (the shared state), but each runs only its own executions: two of them
 * whose nodes start waiting for one message at once would both consume it. Here a daemon
 * consumes a kept message only under a claim it won in the database (KeptClaims.claim), in a
 * step of its own after that: the node waits first, then is woken with the message. A claim
 * lost to another daemon is tried again later, until the message is gone or has expired.
 */
import type { BufferedMessage, WfxState } from '../state/state.js';
import { STATE, STATUS } from '../state/state.js';
import { subscriptionsFor, type Subscription } from '../state/subscriptions.js';
import { execution } from '../state/executions.js';

/** The database's part: a claim per kept message, fenced by the claiming execution's partition lease. */
export interface KeptClaims {
  /**
   * Claims kept message `messageId` for a step of execution `instanceId`. Resolves true when
   * this daemon holds the claim and its copy of the shared state has everything written before
   * it was won (a message still there then is still kept); false when another daemon holds it.
   */
  claim(messageId: string, instanceId: string, expiresAt: string): Promise<boolean>;
  /** Ends this daemon's claim on `messageId` for execution `instanceId` (consumed, or not wanted). */
  release(messageId: string, instanceId: string): Promise<void>;
  /**
   * Calls `listener` with the ids of the messages other daemons keep or remove, once this
   * daemon has read that: a message kept there may be one a node here waits for, and one
   * removed there may leave a node here waiting that lost its claim.
   */
  onMessages(listener: (messageIds: readonly string[]) => void): void;
}

/** The waits that may consume `message`, oldest first: those a delivery of it would resume. */
export function waitingFor(state: WfxState, message: BufferedMessage): Subscription[] {
  return subscriptionsFor(state, message.organization, message.eventType, message.correlationKey).filter((sub) => {
    const inst = execution(state, sub.instanceId);
    // Not resident: cold, at rest in this wait (the index keeps its subscriptions); the step
    // that consumes reads it back and checks again (consumeKept).
    if (inst === undefined) return true;
    const ni = inst.nodes[sub.nodeInstanceId];
    return inst.stateCd === STATE.RUNNING && ni?.statusCd === STATUS.WAITING && ni.wait?.kind === 'event';
  });
}

/** How long a lost claim waits before it is tried again: longer each time, up to the last. */
const RETRY_MS = [100, 250, 500, 1_000, 2_000, 5_000] as const;

export class KeptClaiming {
  /** Messages being claimed here: one attempt each at a time. */
  private readonly busy = new Set<string>();
  /** Messages offered again while busy: offered once more when the attempt ends. */
  private readonly again = new Set<string>();
  /**
   * Messages whose claim another daemon held: when to try again, how many tries so far, and what
   * the message was for (once it is gone, the nodes here that waited for it may take another).
   */
  private readonly retries = new Map<
    string,
    { timer: NodeJS.Timeout; tries: number; organization: string; eventType: string }
  >();
  private closed = false;

  constructor(
    private readonly deps: {
      readonly state: WfxState;
      readonly claims: KeptClaims;
      readonly now: () => Date;
      /**
       * Consumes kept message `messageId` for the wait `sub` names, in one engine step: false,
       * changing nothing, when the message is gone or that node no longer waits for it.
       */
      readonly consume: (messageId: string, sub: Subscription) => Promise<boolean>;
      readonly track: (work: Promise<unknown>) => void;
      readonly onError: (err: unknown, what: string) => void;
    },
  ) {
    deps.claims.onMessages((ids) => {
      for (const id of ids) if (deps.state.messages[id] !== undefined || this.retries.has(id)) this.offer(id);
    });
  }

  /** Offers every kept message to the nodes waiting here (after a restart, or partitions taken). */
  offerAll(): void {
    for (const id of Object.keys(this.deps.state.messages)) this.offer(id);
  }

  /**
   * Offers kept message `id` to the nodes waiting here for it, oldest first: claims it for the
   * first and consumes it in a step; for the next one if that node no longer waits.
   */
  offer(id: string): void {
    if (this.closed) return;
    if (this.busy.has(id)) {
      this.again.add(id);
      return;
    }
    const retry = this.retries.get(id);
    if (retry) clearTimeout(retry.timer);
    this.busy.add(id);
    this.deps.track(
      this.consume(id)
        .then((outcome) => {
          if (outcome === 'held') return this.later(id);
          this.retries.delete(id);
          // Consumed elsewhere: a node here that waited for it may take another one now.
          if (outcome === 'gone' && retry) this.offerLike(retry);
        })
        .catch((err: unknown) => {
          if (this.closed) return;
          this.deps.onError(err, `consuming kept message ${id}`);
          this.later(id);
        })
        .finally(() => {
          this.busy.delete(id);
          if (this.again.delete(id)) this.offer(id);
        }),
    );
  }

  /** Stops trying: the engine is closing. */
  close(): void {
    this.closed = true;
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * Consumes message `id` for the first node here that waits for it: `consumed`; `gone` when
   * it is no longer kept (or nothing here waits for it); `held` when another daemon holds its
   * claim.
   */
  private async consume(id: string): Promise<'consumed' | 'gone' | 'held'> {
    const { state, claims } = this.deps;
    for (;;) {
      const message = this.live(id);
      const first = message && waitingFor(state, message)[0];
      if (!message || !first) return 'gone';
      if (!(await claims.claim(id, first.instanceId, message.expiresAt))) return 'held';
      let consumed = false;
      try {
        consumed = await this.deps.consume(id, first);
      } finally {
        await claims.release(id, first.instanceId);
      }
      if (consumed) return 'consumed';
    }
  }

  /** Offers the kept messages of an organization and event type. */
  private offerLike(like: { organization: string; eventType: string }): void {
    for (const m of Object.values(this.deps.state.messages))
      if (m.organization === like.organization && m.eventType === like.eventType) this.offer(m.id);
  }

  /** Kept message `id` if it is there and has not expired. */
  private live(id: string): BufferedMessage | undefined {
    const message = this.deps.state.messages[id];
    return message && message.expiresAt > this.deps.now().toISOString() ? message : undefined;
  }

  /** Tries message `id` again after a while, if it is still kept then. */
  private later(id: string): void {
    const message = this.live(id);
    if (this.closed || !message) {
      this.retries.delete(id);
      return;
    }
    const tries = (this.retries.get(id)?.tries ?? 0) + 1;
    const timer = setTimeout(() => this.offer(id), RETRY_MS[Math.min(tries, RETRY_MS.length) - 1]);
    this.retries.set(id, { timer, tries, organization: message.organization, eventType: message.eventType });
  }
}
