/**
 * The wire contract of the daemon's HTTP API: every request and answer, defined once. The
 * routes validate with these schemas, the client (src/client) and the handlers use their
 * static types, and /openapi.json documents them.
 */
export * from './common.js';
export * from './process.js';
export * from './recovery.js';
export * from './bulk.js';
export * from './tasks.js';
export * from './events.js';
export * from './flows.js';
export * from './keys.js';
export * from './webhooks.js';
export * from './email-connections.js';
export * from './ai-providers.js';
export * from './memory.js';
export * from './files.js';
export * from './triggers.js';
export * from './domains.js';
export * from './jobs.js';
export * from './admin.js';
export * from './secrets.js';
export * from './meta.js';
export * from './console.js';
export * from './moves.js';
export * from './failures.js';
export * from './audit.js';
export * from './project.js';
