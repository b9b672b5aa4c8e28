/**
 * An engine's part in a daemon sharing its database (engine/cluster-port.ts's EngineCluster), made of what
 * the database gives: claims on kept messages (kept-claims.ts), the passing of thrown events to
 * the other daemons (thrown-outbox.ts), and which message ids' partitions this daemon holds.
 */
import type { EngineClusterPort } from '../engine/cluster-port.js';
import { KeptClaiming, type KeptClaims } from './kept-claims.js';
import { ThrownOutbox, type ThrownPassing } from './thrown-outbox.js';

/** What the database gives an engine's part; each left out leaves the engine as a daemon alone has it. */
export interface EngineParts {
  /** Claims on kept messages: a kept message is then consumed only under a claim won there. */
  readonly keptClaims?: KeptClaims;
  /** How thrown events reach the other daemons: each is kept until they have it. */
  readonly thrownPassing?: ThrownPassing;
  /** Whether this daemon holds the partition of message id `organization|messageId` now. Absent: every one. */
  readonly holdsMessageId?: (key: string) => boolean;
}

/** The engine's port (EngineOptions.cluster) over `parts`. */
export function engineCluster(parts: EngineParts): EngineClusterPort {
  return (engine) => {
    const claiming = parts.keptClaims
      ? new KeptClaiming({
          state: engine.state,
          claims: parts.keptClaims,
          now: engine.now,
          consume: engine.consumeKept,
          track: engine.track,
          onError: engine.onError,
        })
      : null;
    const outbox = parts.thrownPassing
      ? new ThrownOutbox({
          state: engine.state,
          passing: parts.thrownPassing,
          passed: engine.passedThrown,
          deliverHere: engine.deliverHere,
          now: engine.now,
          track: engine.track,
          onError: engine.onError,
        })
      : null;
    const holds = parts.holdsMessageId ?? (() => true);
    return {
      claimsKept: claiming !== null,
      keepsThrown: outbox !== null,
      holdsMessageId: (key) => holds(key),
      offerKept: (id) => claiming!.offer(id),
      thrownHere: (id) => outbox!.thrownHere(id),
      loaded: () => {
        claiming?.offerAll();
        outbox?.passAll();
      },
      close: () => {
        claiming?.close();
        outbox?.close();
      },
    };
  };
}
