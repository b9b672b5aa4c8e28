/**
 * The connections the daemon serves, and which one gives way when the cap is reached
 * (docs/decisions/089-connections-an-idle-flood-cannot-take.md). A connection is waiting (it
 * has sent no request yet, or only part of one, or is idle after its answers), receiving (a
 * request's headers came and its body is still coming) or busy (a request whose body has all
 * come is not answered yet: a stream, a long poll, a handler at work). When every place is
 * taken, a new connection takes the place of the connection that has waited longest, or of a
 * request whose body stopped coming; a busy one never gives way. One remote address may hold
 * no more than a share of the places while others hold some: a new connection from an address
 * at its share is refused then, and takes the place of one of its own when it holds them all.
 */
import { isIPv6 } from 'node:net';

/** What the table needs to know of a socket: the bytes it has received (`net.Socket` has it). */
export interface Peer {
  readonly bytesRead: number;
}

/** What the table needs to know of a request: whether its body has all arrived (`IncomingMessage` has it). */
export interface Arriving {
  readonly complete: boolean;
}

/** Why a connection gave way: it never sent a whole request, was idle after an answer, or its request's body stopped coming. */
export type Eviction = 'no-request' | 'idle' | 'stalled';

/**
 * What to do with a new connection: serve it (after closing `victim` when one gave way), accept
 * it only to answer its request TOO_MANY_CONNECTIONS, or reset it as accepted.
 */
export type Admission<S> =
  | { readonly kind: 'served'; readonly victim: { readonly socket: S; readonly why: Eviction } | null }
  | { readonly kind: 'over' }
  | { readonly kind: 'refused' };

/** Bounds of a ConnectionTable. */
export interface TableLimits {
  /** Connections served at once. */
  readonly maxConnections: number;
  /** Connections accepted over it only to be refused (overflowConnections). */
  readonly overflow: number;
  /** ms a request's body may bring nothing before its connection may give way. */
  readonly stallMs: number;
}

/** The share of the places past which one address gets no new one while other addresses hold some. */
const ADDRESS_SHARE = 1 / 2;

/** The connections of one address (an IPv6 /64). */
interface Address<S> {
  readonly key: string;
  /** Its connections served. */
  held: number;
  /** Those of them that may give way, in the table's order (see ConnectionTable.#queue). */
  readonly queue: Set<Held<S>>;
}

/** One connection served. */
interface Held<S> {
  readonly socket: S;
  readonly address: Address<S>;
  /** Requests received whose answers have not finished (more than one when pipelined). */
  pending: number;
  /** Received, while only one request is pending: that request, until its body has all come (then null: busy). */
  request: Arriving | null;
  /** Has finished an answer already (waiting, it is then idle after one). */
  answered: boolean;
  /** Bytes the socket had received when the table last looked at its request's body (-1: not yet), and when. */
  seenBytes: number;
  seenAt: number;
}

const OVER = { kind: 'over' } as const;
const REFUSED = { kind: 'refused' } as const;

/**
 * The served connections and those accepted over the cap. Invariant: at most `maxConnections`
 * served and `overflow` over, so that the sockets never hold more descriptors than their sum: a
 * connection that gives way leaves the table in the call that admits its successor, and the
 * caller closes it there (which frees its descriptor at once). Every operation is O(1) but
 * `admit` with a full table, which walks the connections that may give way, oldest first, and
 * moves those it skips to the back. Time comes from `now` (ms, monotonic).
 */
export class ConnectionTable<S extends Peer> {
  readonly #limits: TableLimits;
  readonly #share: number;
  readonly #now: () => number;
  readonly #held = new Map<S, Held<S>>();
  readonly #over = new Set<S>();
  /**
   * The connections that may give way (waiting or receiving, and busy ones not yet noticed),
   * in order of when they started to wait (accepted, or answered last) or were last seen
   * receiving: the first has waited longest. A request leaves its connection where it is; the
   * walk in `admit` takes a busy one out when it comes to it.
   */
  readonly #queue = new Set<Held<S>>();
  readonly #addresses = new Map<string, Address<S>>();
  /** Addresses holding their share or more (at most 1 / ADDRESS_SHARE of them). */
  readonly #crowded = new Set<Address<S>>();

  constructor(limits: TableLimits, now: () => number) {
    this.#limits = limits;
    this.#share = Math.max(1, Math.floor(limits.maxConnections * ADDRESS_SHARE));
    this.#now = now;
  }

  /** Connections served now. */
  get served(): number {
    return this.#held.size;
  }

  /** Connections accepted over the cap now. */
  get over(): number {
    return this.#over.size;
  }

  /** Addresses holding their share of the places or more, and how many they hold. */
  crowded(): Array<{ readonly address: string; readonly held: number }> {
    return [...this.#crowded].map((a) => ({ address: a.key, held: a.held }));
  }

  /** Whether `socket` was accepted over the cap (its requests are refused). */
  isOver(socket: S): boolean {
    return this.#over.has(socket);
  }

  /**
   * A new connection from `address` (an addressKey): served when there is room or some
   * connection gives way (returned, already out of the table: the caller closes it), else over
   * the cap while the overflow has room, else refused.
   */
  admit(socket: S, address: string): Admission<S> {
    let victim: { socket: S; why: Eviction } | null = null;
    if (this.#held.size >= this.#limits.maxConnections) {
      const gives = this.#victimFor(this.#addresses.get(address));
      if (gives === null) {
        if (this.#over.size >= this.#limits.overflow) return REFUSED;
        this.#over.add(socket);
        return OVER;
      }
      victim = { socket: gives.socket, why: gives.pending > 0 ? 'stalled' : gives.answered ? 'idle' : 'no-request' };
      this.#remove(gives);
    }
    let entry = this.#addresses.get(address);
    if (entry === undefined) {
      entry = { key: address, held: 0, queue: new Set() };
      this.#addresses.set(address, entry);
    }
    if (++entry.held >= this.#share) this.#crowded.add(entry);
    const held: Held<S> = {
      socket,
      address: entry,
      pending: 0,
      request: null,
      answered: false,
      seenBytes: -1,
      seenAt: 0,
    };
    this.#held.set(socket, held);
    this.#enqueue(held);
    return { kind: 'served', victim };
  }

  /**
   * A request arrived on `socket` (its headers). False when the socket is not served (over the
   * cap, or gone): its answer need not be reported.
   */
  requested(socket: S, request: Arriving): boolean {
    const held = this.#held.get(socket);
    if (held === undefined) return false;
    // A second request pending means the first one's body has all come: busy.
    held.request = ++held.pending === 1 ? request : null;
    held.seenBytes = -1;
    return true;
  }

  /** A request's answer on `socket` finished. */
  answered(socket: S): void {
    const held = this.#held.get(socket);
    if (held === undefined || --held.pending > 0) return;
    held.request = null;
    held.answered = true;
    this.#dequeue(held);
    this.#enqueue(held);
  }

  /** `socket` closed (whoever closed it). */
  closed(socket: S): void {
    const held = this.#held.get(socket);
    if (held !== undefined) this.#remove(held);
    else this.#over.delete(socket);
  }

  /**
   * The connection that gives way to a new one from `address` (undefined: one holding none).
   * An address at its share gets none while other addresses hold places (its new connections
   * are refused: cheaper than cycling through its places, decision 089), and one of its own
   * when it holds them all. Another gets one of the address holding most, when that holds its
   * share; else the first of all that may give way. Null when none may.
   */
  #victimFor(address: Address<S> | undefined): Held<S> | null {
    if (address !== undefined && address.held >= this.#share)
      return address.held === this.#held.size ? this.#first(address.queue) : null;
    let most: Address<S> | null = null;
    for (const a of this.#crowded) if (most === null || a.held > most.held) most = a;
    return (most && this.#first(most.queue)) ?? this.#first(this.#queue);
  }

  /**
   * The first connection of `queue` that may give way: waiting, or receiving a body that has
   * brought nothing for `stallMs`. On the way, busy connections leave the queues and receiving
   * ones still moving go to the back; each is looked at once at most.
   */
  #first(queue: Set<Held<S>>): Held<S> | null {
    let looks = queue.size;
    for (const held of queue) {
      if (looks-- === 0) break;
      if (held.pending === 0) return held;
      if (held.request === null || held.request.complete) {
        held.request = null;
        this.#dequeue(held);
        continue;
      }
      const now = this.#now();
      const bytes = held.socket.bytesRead;
      if (bytes === held.seenBytes && now - held.seenAt >= this.#limits.stallMs) return held;
      if (bytes !== held.seenBytes) {
        held.seenBytes = bytes;
        held.seenAt = now;
      }
      this.#dequeue(held);
      this.#enqueue(held);
    }
    return null;
  }

  #enqueue(held: Held<S>): void {
    this.#queue.add(held);
    held.address.queue.add(held);
  }

  #dequeue(held: Held<S>): void {
    this.#queue.delete(held);
    held.address.queue.delete(held);
  }

  #remove(held: Held<S>): void {
    this.#held.delete(held.socket);
    this.#dequeue(held);
    const address = held.address;
    if (--address.held < this.#share) this.#crowded.delete(address);
    if (address.held === 0) this.#addresses.delete(address.key);
  }
}

/**
 * The key one remote address counts under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address as its IPv4), an IPv6 address as its /64 (one host is given a /64 at least), '' when
 * unknown (a socket already closed). Pure.
 */
export function addressKey(remote: string | undefined): string {
  if (remote === undefined) return '';
  if (remote.startsWith('::ffff:') && remote.includes('.')) return remote.slice(7);
  if (!isIPv6(remote)) return remote;
  const bare = remote.split('%')[0]!;
  const [head = '', tail] = bare.split('::');
  const words = (s: string) => (s === '' ? [] : s.split(':'));
  // A dotted IPv4 at the end stands for two groups.
  const size = (groups: string[]) => groups.length + (groups.at(-1)?.includes('.') ? 1 : 0);
  const front = words(head);
  const back = tail === undefined ? [] : words(tail);
  const groups = [...front, ...Array<string>(Math.max(0, 8 - size(front) - size(back))).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => (g.includes('.') ? g : Number.parseInt(g, 16).toString(16)))
    .join(':')}::/64`;
}
