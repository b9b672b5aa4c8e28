import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { WfxError } from '../../../shared/errors.js';
import { uuidv7 } from '../../engine/ids.js';
import type { WfxRecord } from '../../state/records.js';
import type { EmailConnection, WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization, NAME_SCHEMA, ORG_QUERY } from '../organization.js';

export interface EmailConnectionRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly now?: () => Date;
}

const nameParams = { type: 'object', required: ['name'], properties: { name: NAME_SCHEMA } } as const;
const fields = {
  host: { type: 'string', minLength: 1, maxLength: 255 },
  port: { type: 'integer', minimum: 1, maximum: 65535 },
  security: { type: 'string', enum: ['TLS', 'STARTTLS', 'NONE'] },
  user: { type: 'string', minLength: 1, maxLength: 500 },
  password: { type: 'string', minLength: 1, maxLength: 2000 },
  mailbox: { type: 'string', minLength: 1, maxLength: 500 },
} as const;

/** A connection as the API shows it: never the password. */
function view(c: EmailConnection) {
  const { password: _password, ...rest } = c;
  return { ...rest, hasPassword: true };
}

/** /admin/email-connections: the IMAP mailboxes email triggers watch (permission ADMIN). */
export function emailConnectionRoutes(app: FastifyInstance, deps: EmailConnectionRouteDeps): void {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());
  const admin = { auth: { permission: 'ADMIN' as const } };
  const find = (caller: Caller, name: string, named?: string) => {
    const organization = actingOrganization(caller, named);
    const c = Object.values(store.state.emailConnections).find((x) => x.organization === organization && x.name === name);
    if (!c) throw new WfxError('NOT_FOUND', `no email connection ${name}`);
    return c;
  };

  app.post('/admin/email-connections', {
    config: admin,
    schema: {
      tags: ['email'],
      summary: 'Add an IMAP connection for email triggers (the password is never returned)',
      querystring: ORG_QUERY,
      body: {
        type: 'object',
        required: ['name', 'host', 'user', 'password'],
        additionalProperties: false,
        properties: { name: NAME_SCHEMA, ...fields, security: { ...fields.security, default: 'TLS' }, mailbox: { ...fields.mailbox, default: 'INBOX' } },
      },
    },
    handler: async (request: FastifyRequest<{ Querystring: { organization?: string }; Body: Omit<EmailConnection, 'connectionId' | 'organization' | 'createdAt' | 'updatedAt' | 'port'> & { port?: number } }>, reply) => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const b = request.body;
      if (Object.values(store.state.emailConnections).some((c) => c.organization === organization && c.name === b.name)) {
        throw new WfxError('VALIDATION_ERROR', `an email connection named ${b.name} exists already`);
      }
      const at = now().toISOString();
      const connection: EmailConnection = {
        connectionId: uuidv7(now()),
        name: b.name,
        organization,
        host: b.host,
        port: b.port ?? (b.security === 'TLS' ? 993 : 143),
        security: b.security,
        user: b.user,
        password: b.password,
        mailbox: b.mailbox,
        createdAt: at,
        updatedAt: at,
      };
      await store.commit({ type: 'emailConnection.saved', connection });
      return reply.status(201).send(view(connection));
    },
  });

  app.get('/admin/email-connections', {
    config: admin,
    schema: { tags: ['email'], summary: 'IMAP connections (no passwords)', querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Querystring: { organization?: string } }>) => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.values(store.state.emailConnections)
        .filter((c) => org === null || c.organization === org)
        .map(view);
      return { items };
    },
  });

  app.get('/admin/email-connections/:name', {
    config: admin,
    schema: { tags: ['email'], summary: 'One IMAP connection (no password)', params: nameParams, querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string } }>) => view(find(request.caller!, request.params.name, request.query.organization)),
  });

  app.patch('/admin/email-connections/:name', {
    config: admin,
    schema: {
      tags: ['email'],
      summary: 'Change an IMAP connection (host, port, security, user, password, mailbox)',
      params: nameParams,
      querystring: ORG_QUERY,
      body: { type: 'object', additionalProperties: false, minProperties: 1, properties: fields },
    },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string }; Body: Partial<EmailConnection> }>) => {
      const c = find(request.caller!, request.params.name, request.query.organization);
      const connection = { ...c, ...request.body, updatedAt: now().toISOString() };
      await store.commit({ type: 'emailConnection.saved', connection });
      return view(connection);
    },
  });

  app.delete('/admin/email-connections/:name', {
    config: admin,
    schema: { tags: ['email'], summary: 'Remove an IMAP connection', params: nameParams, querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string } }>) => {
      const c = find(request.caller!, request.params.name, request.query.organization);
      await store.commit({ type: 'emailConnection.deleted', connectionId: c.connectionId });
      return { name: c.name, deleted: true };
    },
  });
}
