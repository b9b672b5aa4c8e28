import { TRACER } from '../observe/tracing.js';
import { traceRequests } from './request-spans.js';
import { Readable } from 'node:stream';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import { FastifySSEPlugin } from 'fastify-sse-v2';
import { ErrorAnswer, type ErrorBody } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import {
  DEFAULT_MAX_JSON_DEPTH,
  describeDepthExcess,
  formatJsonPath,
  jsonDepthExcess,
} from '../../shared/json-shape.js';
import { VERSION } from '../../shared/version.js';
import { installAuth } from './auth.js';
import { DEFAULT_HEADERS_TIMEOUT_MS, limitConnections, serverTimeouts } from './connections.js';
import { answerClientError, toErrorAnswer } from './error-answer.js';
import { refuseUnmetExpectations } from './expectations.js';
import { endSilentConnectionsOnClose } from './silent-connections.js';
import { lazyChildLogger } from './request-logger.js';
import { CompileQueue, serializerFactory, validatorCompilers } from './route-compilers.js';
import { RateLimiter, SharedRateLimiter } from './rate-limit.js';
import { adminRoutes } from './routes/admin.js';
import { flowCoverageRoutes } from './routes/flow-coverage.js';
import { flowEnvironmentRoutes } from './routes/flow-environments.js';
import { flowSecretRoutes } from './routes/flow-secrets.js';
import { metaRoutes } from './routes/meta.js';
import { processRoutes } from './routes/process.js';
import { recoveryRoutes } from './routes/repair.js';
import { moveRoutes } from './routes/moves.js';
import { failureRoutes } from './routes/failures.js';
import { bulkRoutes } from './routes/bulk.js';
import { emailConnectionRoutes } from './routes/email-connections.js';
import { aiProviderRoutes } from './routes/ai-providers.js';
import { memoryRoutes } from './routes/memory.js';
import { jobRoutes } from './routes/jobs.js';
import { domainRoutes } from './routes/domains.js';
import { JobBoard } from '../jobs/board.js';
import { triggerRoutes } from './routes/triggers.js';
import { scheduleRoutes } from './routes/schedules.js';
import { backupRoutes } from './routes/backup.js';
import { clusterRoutes } from './routes/cluster.js';
import { fileRoutes } from './routes/files.js';
import { webhookRoutes } from './routes/webhooks.js';
import { StreamHub } from './streams.js';
import type { DurableStore } from '../store/store.js';
import { inlineFlowChecker } from '../flows/check.js';
import { CoverageBoard } from '../flows/coverage-board.js';
import { consoleRoutes } from './console/assets.js';
import { SignInLinks } from './console/links.js';
import { sessionAuthenticator } from './console/session-auth.js';
import { SessionStore } from './console/sessions.js';
import { signInRoutes } from './console/signin-routes.js';
import { metricsRoute, timeRoutes } from './metrics-route.js';
import { installAudit } from './audit-recorder.js';
import { installDurableReplies } from './durable-reply.js';
import { auditRoutes } from './routes/audit.js';
import { projectRoutes } from './routes/project.js';
import { mcpRoutes } from './routes/mcp.js';
import { McpSessions } from './mcp/sessions.js';
import { Catalogue } from '../catalogue/catalogue.js';
import { nameOperations, openApiDocument } from './operation-ids.js';
import type { ServerOptions } from './server-options.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The SSE fan-out (its subscriber count is a diagnostic). */
    streams: StreamHub;
    /** Long polls of the jobs API and the workers seen (worker health). */
    jobBoard: JobBoard;
    /** Compiles every route validator and serializer not compiled yet (the daemon does it once it is up); rejects with a schema's compile error. */
    compileSchemas: () => Promise<void>;
  }
}

/** Body of every error answer (SPEC.md section 5; the wire's type, shared/api). */
export type { ErrorBody };
export { answerClientError, toErrorAnswer };
export type { ServerOptions };

/**
 * Builds the daemon's HTTP app. It does not listen: the daemon calls `listen`, tests call
 * `inject()`. Every route declares its schemas (validation and /openapi.json) and, in
 * `config.auth`, the permission it needs.
 */
export function buildServer(options: ServerOptions): FastifyInstance {
  const compiles = new CompileQueue();
  const app = Fastify({
    loggerInstance: options.logger,
    schemaController: { compilersFactory: { buildSerializer: serializerFactory(compiles) } },
    // A request's child logger is made only if something logs through it (rarely: errors).
    ...(options.logger && { childLoggerFactory: lazyChildLogger }),
    // wfx logs requests itself (with the credential's key id, never its secret).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A connection that sends no request in time, or idles between two, is closed (api/connections.ts).
    ...serverTimeouts(options.connections),
    // A memory key (up to MEMORY_MAX_NAME_LENGTH characters) is one path parameter, percent-
    // encoded up to 12 characters each; each route's schema bounds its own parameters.
    routerOptions: { maxParamLength: 12 * 512 },
    // Fastify's own 503 while closing has a body of its own shape: wfx refuses in its own (below).
    return503OnClosing: false,
    // Errors the router raises before any route runs (a bad URL, an over-long path parameter):
    // the same error body as everything else.
    // Errors of Node's HTTP parser (a malformed request line, a header without a colon, headers
    // over the limit, a bad Content-Length, a request too slow to arrive): no request exists to
    // answer through, so the answer is written on the socket, in the same error body.
    clientErrorHandler: answerClientError,
    frameworkErrors: (err, _request, reply) => {
      const body: ErrorBody = { error: 'VALIDATION_ERROR', message: err.message, timestamp: new Date().toISOString() };
      void (reply as unknown as FastifyReply).status(400).send(body);
    },
  });
  const validators = validatorCompilers(compiles);
  app.setValidatorCompiler(validators.compile);
  // Validators and serializers are compiled in the background once the daemon is up (daemon.ts):
  // a route's first request need not.
  app.decorate('compileSchemas', () => compiles.compileAll());
  app.decorate('publicOrigin', options.publicUrl === undefined ? null : new URL(options.publicUrl).origin);

  app.setErrorHandler((err, request, reply) => {
    const { status, body } = toErrorAnswer(err);
    // A provider test that fails is an answer, not a fault of the daemon: a line with its code, no stack.
    if (err instanceof WfxError && err.code === 'AI_PROVIDER_TEST_FAILED')
      request.log.warn({ code: err.code, details: err.details }, `provider test failed: ${err.message}`);
    else if (status >= 500) request.log.error({ err }, 'request failed');
    if (body.retryAfter !== undefined) void reply.header('retry-after', String(body.retryAfter));
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = toErrorAnswer(
      new WfxError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`),
    );
    void reply.status(status).send(body);
  });

  app.addSchema(ErrorAnswer);
  void app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'wfx',
        version: VERSION,
        description: 'The wfx workflow execution service. See docs/api.md.',
        license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
      // The daemon that serves the document: relative, so it holds behind any proxy or port.
      servers: [{ url: '/', description: 'this daemon' }],
    },
    transformObject: (doc) => ('openapiObject' in doc ? openApiDocument(doc.openapiObject) : doc.swaggerObject),
  });
  nameOperations(app);
  void app.register(FastifySSEPlugin);

  const sharing = options.sharing;
  const counted = new RateLimiter(options.now ? () => options.now!().getTime() : Date.now);
  const limiter = sharing
    ? new SharedRateLimiter(sharing.rateLimits, counted, (line) => options.logger?.warn(line))
    : counted;
  const hub = new StreamHub(options.engine);
  app.decorate('streams', hub);
  const engineNow = options.now ?? (() => new Date());
  const board = new JobBoard(options.engine, options.store.state, Date.now, () => engineNow().getTime());
  app.decorate('jobBoard', board);
  options.metrics?.of.readFrom({
    workersPolling: () => board.health(null).reduce((n, d) => n + d.workers.filter((w) => w.polling).length, 0),
  });
  // While the server closes, a request still arriving on an open connection is refused with
  // SERVICE_UNAVAILABLE; a request already past this check finishes, and its answer closes the
  // connection (Node ends only the connections idle as it starts closing: one answered after,
  // such as a long poll's below, would stay open as long as its client keeps it).
  if (TRACER !== null) traceRequests(app, TRACER);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    void reply
      .status(503)
      .header('connection', 'close')
      .send(toErrorAnswer(new WfxError('SERVICE_UNAVAILABLE', 'the daemon is stopping')).body);
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  refuseUnmetExpectations(app);
  const maxConnections = options.connections?.maxConnections;
  if (maxConnections !== undefined)
    limitConnections(
      app,
      { maxConnections, headersTimeoutMs: options.connections?.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS },
      (line) => options.logger?.warn(line),
    );
  // Streams never finish by themselves: end them before the server waits for in-flight requests.
  app.addHook('preClose', async () => hub.endAll());
  // Long polls answer what they have (nothing) at once, so that closing does not wait for them.
  app.addHook('preClose', async () => board.close());
  // Then the connections that never sent a request (Node waits for those).
  endSilentConnectionsOnClose(app);
  app.addHook('onClose', async () => hub.close());
  // MCP sessions end with the daemon: their calls stop waiting, their executions go on.
  const mcpSessions = new McpSessions();
  app.addHook('preClose', async () => mcpSessions.close());
  const nowDate = options.now ?? (() => new Date());
  const sessions = options.console?.sessions ?? new SessionStore(undefined, () => nowDate().getTime());
  const login = options.console?.login;
  installAuth(app, {
    state: options.store.state,
    limiter,
    session: sessionAuthenticator({ sessions, state: options.store.state, login, now: nowDate }),
    ...(sharing && {
      counted: (request) => sharing.counted(request),
      daemonCall: (request) => sharing.daemonCall(request),
    }),
    bearer: options.bearer,
    now: options.now,
    accessLog: options.accessLog,
  });
  if (options.metrics) timeRoutes(app, options.metrics.of);
  // After authentication's, so its hooks run first: a request another daemon serves is passed on as it came.
  if (sharing) sharing.install(app);
  if (options.audit) installAudit(app, { trail: options.audit, now: options.now });
  // After the audit's: its onSend hook takes a handed-over durability first, to write beside it.
  installDurableReplies(app, () => closing);
  // Every parsed JSON body, on every route, before its schema or handler sees it: a body nested
  // thousands deep overflows whatever recurses over it later (the journal's JSON.stringify).
  // Raw bodies (webhook deliveries, a Buffer; an upload's stream) are checked where they are parsed.
  const maxJsonDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  app.addHook('preValidation', (request, _reply, done) => {
    const body = request.body;
    const excess =
      typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && !(body instanceof Readable)
        ? jsonDepthExcess(body, maxJsonDepth)
        : null;
    if (excess === null) return done();
    done(
      new WfxError('VALIDATION_ERROR', `the request body is ${describeDepthExcess(excess, 'body')}`, {
        details: { path: formatJsonPath(excess.path, 'body'), maxDepth: excess.maxDepth },
      }),
    );
  });

  void app.register(async (routes) => {
    metaRoutes(routes, {
      store: options.store as DurableStore<unknown, unknown>,
      state: options.store.state,
      hub,
      heartbeatSeconds: options.heartbeatSeconds,
      now: options.now,
      historyDamage: options.historyDamage,
      storeHealth: options.storeHealth,
      ...(sharing && { others: sharing.others }),
    });
    processRoutes(routes, {
      engine: options.engine,
      hub,
      state: options.store.state,
      heartbeatSeconds: options.heartbeatSeconds,
      now: options.now,
      ...(sharing && { others: sharing.others }),
    });
    recoveryRoutes(routes, { engine: options.engine });
    moveRoutes(routes, { engine: options.engine });
    failureRoutes(routes, { engine: options.engine, ...(sharing && { others: sharing.others }) });
    bulkRoutes(routes, { engine: options.engine });
    const flowChecker = options.flowChecker ?? inlineFlowChecker();
    const secrets = options.engine.secrets;
    // The one writer of what the admin routes change (no route writes the journal itself).
    const catalogue = new Catalogue(options.store, secrets);
    adminRoutes(routes, { store: options.store, catalogue, limiter, flowChecker, secrets, now: options.now });
    flowEnvironmentRoutes(routes, { store: options.store });
    flowSecretRoutes(routes, { store: options.store, catalogue, now: options.now });
    projectRoutes(routes, {
      state: options.store.state,
      catalogue,
      flowChecker,
      secrets,
      secretValues: options.engine.secretValues,
      now: options.now ?? (() => new Date()),
    });
    flowCoverageRoutes(routes, { board: options.coverage ?? new CoverageBoard(options.store), now: options.now });
    webhookRoutes(routes, {
      store: options.store,
      catalogue,
      receiver: options.webhooks,
      hub,
      engine: options.engine,
      heartbeatSeconds: options.heartbeatSeconds,
      now: options.now,
    });
    emailConnectionRoutes(routes, {
      store: options.store,
      catalogue,
      secrets,
      now: options.now,
      ...(options.emailStates && { stateOf: options.emailStates }),
    });
    aiProviderRoutes(routes, { store: options.store, catalogue, secrets, ai: options.ai, now: options.now });
    memoryRoutes(routes, { store: options.store, catalogue, now: options.now });
    domainRoutes(routes, { store: options.store, catalogue, now: options.now });
    jobRoutes(routes, { engine: options.engine, board, ...(sharing && { others: sharing.others }) });
    triggerRoutes(routes, {
      state: options.store.state,
      health: options.triggerHealth ?? (() => []),
      sharedFallback: options.webhooks.sharedFallback,
    });
    scheduleRoutes(routes, { store: options.store, catalogue, scheduler: options.scheduler });
    signInRoutes(routes, {
      state: options.store.state,
      sessions,
      links: new SignInLinks(() => nowDate().getTime()),
      login,
      now: nowDate,
    });
    mcpRoutes(routes, {
      engine: options.engine,
      hub,
      state: options.store.state,
      sessions: mcpSessions,
      ...(options.audit && { audit: options.audit }),
      now: nowDate,
    });
    if (options.audit) auditRoutes(routes, { trail: options.audit });
    if (options.backup) backupRoutes(routes, { backup: options.backup });
    if (options.cluster) clusterRoutes(routes, { list: options.cluster });
    if (options.metrics) metricsRoute(routes, options.metrics.of, options.metrics.access ?? {});
    // In a scope of their own: uploads take every content type as a stream, JSON included.
    if (options.files) void routes.register(async (scope) => fileRoutes(scope, { files: options.files! }));
    // The browser console: its pages and assets (no credential; hidden from /openapi.json).
    consoleRoutes(routes, { dir: options.console?.dir });
  });
  return app;
}
