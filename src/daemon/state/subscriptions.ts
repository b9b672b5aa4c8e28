/**
 * The subscription index (WfxState.subscriptions): nodes waiting on a message or signal, by
 * bucket, so that delivering an event is a lookup, not a scan. The reducer adds and removes
 * subscriptions (records/subscription-index.ts); recovery rebuilds the index from the waiting nodes.
 */

/**
 * A node waiting on an event, as the subscription index holds it. The event type, ref and
 * correlation key are its bucket's, the rest of the wait is the node's (`wait`).
 */
export interface Subscription {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  readonly nodeId: string;
}

/**
 * A bucket of the subscription index: its one subscription (the usual case: a message under a
 * correlation key of its own), or, once a second node waits in it, all of them by
 * `instanceId|nodeInstanceId`. One subscription as the bucket itself, rather than a dictionary
 * of one, keeps a waiting execution's heap small (docs/decisions/).
 */
export type SubscriptionBucket = Subscription | Map<string, Subscription>;

/**
 * The bucket of a subscription: message subscriptions by organization, ref and correlation
 * key; signal subscriptions by organization and ref (a signal matches any key). An event
 * resumes the subscriptions of both buckets for its key.
 */
export function subscriptionBucket(
  organization: string,
  messageRef: string,
  kind: 'message' | 'signal',
  correlationKey: string | null,
): string {
  return kind === 'signal'
    ? `${organization}|${messageRef}|s`
    : `${organization}|${messageRef}|m|${correlationKey === null ? '\u0000' : correlationKey}`;
}

/**
 * The subscriptions of the executions not in memory (at-rest/execution-cache.ts: its directory
 * holds their waits), as `subscriptionsFor` reads them: WfxState.coldSubscriptions.
 */
export interface ColdSubscriptions {
  /** What an event of `eventType` with `correlationKey` resumes in `organization` (as subscriptionsFor). */
  subscriptionsFor(organization: string, eventType: string, correlationKey: string | null): Subscription[];
}

/**
 * The subscriptions an event of `eventType` with `correlationKey` resumes in `organization`:
 * message subscriptions with the same key, and signal subscriptions whatever their key, of the
 * resident executions, then of those not in memory. Pure read.
 */
export function subscriptionsFor(
  state: {
    readonly subscriptions: Readonly<Record<string, SubscriptionBucket>>;
    readonly coldSubscriptions?: ColdSubscriptions | undefined;
  },
  organization: string,
  eventType: string,
  correlationKey: string | null,
): Subscription[] {
  const messages = state.subscriptions[subscriptionBucket(organization, eventType, 'message', correlationKey)];
  const signals = state.subscriptions[subscriptionBucket(organization, eventType, 'signal', null)];
  const resident =
    signals === undefined
      ? bucketMembers(messages)
      : messages === undefined
        ? bucketMembers(signals)
        : [...bucketMembers(messages), ...bucketMembers(signals)];
  const cold = state.coldSubscriptions?.subscriptionsFor(organization, eventType, correlationKey);
  return cold === undefined || cold.length === 0 ? resident : [...resident, ...cold];
}

/** The subscriptions of a bucket, in the order they were made. */
export function bucketMembers(bucket: SubscriptionBucket | undefined): Subscription[] {
  if (bucket === undefined) return [];
  return bucket instanceof Map ? [...bucket.values()] : [bucket];
}
