/**
 * Events the state keeps until delivered: messages kept for a catch event to come, and events
 * thrown not yet given to every daemon sharing the database.
 */

/** An event an execution threw, to give the other daemons sharing the database (WfxState.thrown). */
export interface PendingThrow {
  readonly id: string;
  /** The execution that threw it: the holder of its partition gives it on. */
  readonly instanceId: string;
  readonly organization: string;
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data: Record<string, unknown>;
  readonly thrownAt: string;
  /**
   * Kept for executions of this daemon it wakes that were not in memory when it was thrown
   * (at-rest/execution-cache.ts): a step of its own delivers it to them once they are read back
   * (EventDelivery.deliverKept; on a daemon sharing the database, the outbox's, which gives it on).
   */
  readonly here?: true;
}

/** A message kept (ttlSeconds) until a subscription consumes it. */
export interface BufferedMessage {
  readonly id: string;
  readonly organization: string;
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data: Record<string, unknown>;
  readonly messageId: string | null;
  readonly receivedAt: string;
  readonly expiresAt: string;
}
