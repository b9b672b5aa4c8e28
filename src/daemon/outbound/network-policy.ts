/**
 * Where the daemon's outgoing HTTP calls (serviceTask, and any later node that calls out) may
 * connect. Checked on the address actually connected to: an IP literal before the socket is
 * made, a host name in the socket's own lookup (so a name resolving to a refused address, or
 * re-resolving to one, is refused), on every connection, so every redirect hop too.
 *
 * Rules, first match wins:
 * 1. `deny` (--http-deny, WFX_HTTP_DENY): refused;
 * 2. `allow` (--http-allow, WFX_HTTP_ALLOW): allowed (it lifts the built-in rules below);
 * 3. the daemon's own listener: its port at any address that reaches it (loopback, the
 *    unspecified 0.0.0.0/8 and ::, and the host's interface addresses when it listens on all);
 * 4. link-local and cloud metadata (169.254.0.0/16, fe80::/10, fd00:ec2::254): refused;
 * 5. anything else (loopback and private ranges included, for local development): allowed.
 * IPv4-mapped IPv6 addresses match the IPv4 rules; 0.0.0.0/8 and :: (which reach local
 * listeners on Linux) also match as 127.0.0.1 and ::1.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, connect as netConnect, isIP, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';
import { parseCidr, type Rule } from './cidr.js';

/** The node failure code of a call the policy refused (never retried). */
export const FORBIDDEN_ADDRESS = 'HTTP_FORBIDDEN_ADDRESS' satisfies NodeFailureCode;

/** The built-in refusals of rule 4. */
const LINK_LOCAL = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128'] as const;
/** Addresses that reach a listener on this host whatever else it listens on (rule 3). */
const LOCAL = ['127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'] as const;
/** A connection not made by then fails (the call's own timeout usually comes first). */
const CONNECT_TIMEOUT_MS = 10_000;

/** Resolves a host name to every address (dns.lookup with `all`); injectable for tests. */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface NetworkPolicyOptions {
  /** CIDRs (or single addresses) refused whatever else applies. */
  readonly deny?: readonly string[];
  /** CIDRs (or single addresses) allowed, though a built-in rule would refuse them; `deny` wins. */
  readonly allow?: readonly string[];
  /**
   * The daemon's listener is not known yet: connections wait for `listening()` (a call resumed
   * at recovery, before the daemon listens on port 0, must not slip past rule 3).
   */
  readonly awaitListener?: boolean;
  /** Default dns.lookup. */
  readonly resolve?: Resolver;
}

/** The error a refused connection fails with; `callHttp` turns it into HTTP_FORBIDDEN_ADDRESS. */
export class ForbiddenAddressError extends Error {
  readonly code = FORBIDDEN_ADDRESS;
  constructor(
    readonly address: string,
    readonly port: number,
    readonly rule: string,
  ) {
    super(`connecting to ${isIP(address) === 6 ? `[${address}]` : address}:${port} is refused: ${rule}`);
    this.name = 'ForbiddenAddressError';
  }
}

/**
 * The policy's refusal in an error's cause chain (fetch wraps it in "fetch failed", an SDK
 * client wraps that again), if any. Pure.
 */
export function forbiddenIn(err: unknown): ForbiddenAddressError | undefined {
  for (let current = err, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof ForbiddenAddressError) return current;
  }
  return undefined;
}

/**
 * The network policy of a daemon's outgoing HTTP calls (see the module comment for its rules)
 * and the fetch dispatcher that enforces it. Throws WfxError USAGE_ERROR on a malformed rule.
 */
export class NetworkPolicy {
  private readonly deny: readonly Rule[];
  private readonly allow: readonly Rule[];
  private readonly denyAny = new BlockList();
  private readonly allowAny = new BlockList();
  private readonly linkLocal: readonly Rule[] = LINK_LOCAL.map((c) => parseCidr(c));
  private readonly local = new BlockList();
  private ownPort: number | null = null;
  private listener: Promise<void> | null = null;
  private release: () => void = () => undefined;
  private readonly resolve: Resolver;
  private agent: { close(): Promise<void> } | null = null;

  constructor(options: NetworkPolicyOptions = {}) {
    this.deny = (options.deny ?? []).map((c) => parseCidr(c, 'a denied network'));
    this.allow = (options.allow ?? []).map((c) => parseCidr(c, 'an allowed network'));
    for (const r of this.deny) addRule(this.denyAny, r.text);
    for (const r of this.allow) addRule(this.allowAny, r.text);
    for (const c of LOCAL) addRule(this.local, c);
    this.resolve = options.resolve ?? (dnsLookup as unknown as Resolver);
    if (options.awaitListener) this.listener = new Promise((resolve) => (this.release = resolve));
  }

  /**
   * The daemon listens at `address`:`port`: from now on rule 3 refuses that port at every
   * address that reaches it (the host's interface addresses too when `address` is unspecified).
   */
  listening(address: string, port: number): void {
    this.ownPort = port;
    if (address === '0.0.0.0' || address === '::') {
      for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) addRule(this.local, i.address);
    } else if (isIP(address) !== 0) addRule(this.local, address);
    this.listener = null;
    this.release();
  }

  /**
   * Why a connection to `address` (an IP address) on `port` is refused, or null when it is
   * allowed. Pure given the policy; cheap (a few block list checks).
   */
  check(address: string, port: number): string | null {
    const ip = unmapped(address);
    const family = isIP(ip);
    if (family === 0) return `${JSON.stringify(address)} is not an IP address`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    // 0.0.0.0/8 and :: connect to this host's listeners on Linux: judged as loopback too.
    const alias = family === 4 ? (ip.startsWith('0.') ? '127.0.0.1' : null) : /^[0:]+$/.test(ip) ? '::1' : null;
    const matches = (list: BlockList): boolean => list.check(ip, type) || (alias !== null && list.check(alias, type));
    if (matches(this.denyAny))
      return `in ${this.deny.find((r) => matches(r.list))!.text}, denied by --http-deny / WFX_HTTP_DENY`;
    if (matches(this.allowAny)) return null;
    if (port === this.ownPort && matches(this.local))
      return `the daemon's own listener (port ${port}); allow it with --http-allow`;
    const linkLocal = this.linkLocal.find((r) => matches(r.list));
    if (linkLocal) return `link-local or cloud metadata address (${linkLocal.text}); allow it with --http-allow`;
    return null;
  }

  /**
   * The fetch `dispatcher` whose every connection is checked (created at first use). Node's
   * fetch is undici, which Node does not export: its Agent class is taken from the global
   * dispatcher undici installs when it loads.
   */
  dispatcher(): object {
    if (this.agent === null) {
      const Agent = undiciAgent();
      this.agent = new Agent({
        connect: (opts: ConnectOptions, callback: ConnectCallback) => void this.connect(opts, callback),
      });
    }
    return this.agent;
  }

  /** Closes the dispatcher's connections; lets waiting connections go on (to be refused or closed). */
  async close(): Promise<void> {
    this.release();
    await this.agent?.close().catch(() => undefined);
  }

  private async connect(opts: ConnectOptions, callback: ConnectCallback): Promise<void> {
    if (this.listener !== null) await this.listener;
    const https = opts.protocol === 'https:';
    const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    const port = Number(opts.port) || (https ? 443 : 80);
    if (isIP(host) !== 0) {
      const refused = this.check(host, port);
      if (refused !== null) return callback(new ForbiddenAddressError(host, port, refused), null);
    }
    // A host name is checked on what it resolves to, right before that address is connected to.
    const lookup = (
      hostname: string,
      options: object,
      cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      this.resolve(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return cb(err, '');
        for (const a of addresses) {
          const refused = this.check(a.address, port);
          if (refused !== null) return cb(new ForbiddenAddressError(a.address, port, refused), '');
        }
        if ((options as { all?: boolean }).all) cb(null, addresses);
        else if (addresses[0]) cb(null, addresses[0].address, addresses[0].family);
        else cb(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      });
    };
    const socket: Socket = https
      ? tlsConnect({
          host,
          port,
          lookup,
          ALPNProtocols: ['http/1.1'],
          ...(isIP(host) === 0 && { servername: opts.servername || host }),
        })
      : netConnect({ host, port, lookup });
    socket.setNoDelay(true);
    const timer = setTimeout(
      () =>
        socket.destroy(
          Object.assign(new Error(`connect timeout (${CONNECT_TIMEOUT_MS} ms)`), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
        ),
      CONNECT_TIMEOUT_MS,
    );
    const onError = (err: Error): void => {
      clearTimeout(timer);
      callback(err, null);
    };
    socket.once('error', onError);
    socket.once(https ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.setKeepAlive(true, 60_000);
      callback(null, socket);
    });
  }
}

/** What undici passes a custom connector. */
interface ConnectOptions {
  readonly hostname: string;
  readonly protocol: string;
  readonly port: string;
  readonly servername?: string;
}
type ConnectCallback = (err: Error | null, socket: Socket | null) => void;
type AgentClass = new (options: { connect: (opts: ConnectOptions, callback: ConnectCallback) => void }) => {
  close(): Promise<void>;
};

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

function undiciAgent(): AgentClass {
  const global = globalThis as unknown as Record<symbol, { constructor: AgentClass } | undefined>;
  // fetch loads undici at its first call, and undici then installs its global Agent.
  if (global[GLOBAL_DISPATCHER] === undefined)
    void fetch('data:,').then(
      (res) => res.arrayBuffer(),
      () => undefined,
    );
  const agent = global[GLOBAL_DISPATCHER];
  if (agent === undefined || agent.constructor.name !== 'Agent')
    throw new Error("the network policy needs Node's fetch (undici) Agent, which is not available");
  return agent.constructor;
}

function addRule(list: BlockList, cidr: string): void {
  const rule = cidr.includes('/') ? cidr : `${cidr}/${isIP(cidr) === 4 ? 32 : 128}`;
  const [address, prefix] = rule.split('/') as [string, string];
  const family = isIP(address);
  if (family !== 0) list.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as its IPv4 address; any other as is. */
function unmapped(address: string): string {
  const m = /^(?:0{0,4}:){0,5}:?ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (m === null || isIP(address) !== 6) return address;
  if (m[1] !== undefined) return m[1];
  const high = parseInt(m[2]!, 16);
  const low = parseInt(m[3]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
