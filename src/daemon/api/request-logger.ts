import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger (`request.log`) that makes its pino child, bound to the request id, only
 * when something is logged through it. Fastify makes one child per request; nearly all requests
 * log nothing through it (the access log is written apart, see createDaemonLogger), and the
 * child and its bindings were garbage on every request
 * (docs/decisions/009-http-per-request-costs.md).
 */
class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | null = null;
  // The log methods, on the prototype (below): per-instance closures would cost what this saves.
  declare fatal: FastifyBaseLogger['fatal'];
  declare error: FastifyBaseLogger['error'];
  declare warn: FastifyBaseLogger['warn'];
  declare info: FastifyBaseLogger['info'];
  declare debug: FastifyBaseLogger['debug'];
  declare trace: FastifyBaseLogger['trace'];
  declare silent: FastifyBaseLogger['silent'];

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  /** The pino child, made now if not yet. */
  real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
  Object.defineProperty(LazyChildLogger.prototype, level, {
    value: function (this: LazyChildLogger, ...args: unknown[]): void {
      (this.real()[level] as (...a: unknown[]) => void)(...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: request loggers made on first use. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}
