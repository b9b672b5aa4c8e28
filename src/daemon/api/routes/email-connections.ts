import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  ConnectionParams,
  CreateConnectionBody,
  OrganizationQuery,
  UpdateConnectionBody,
  type ConnectionView,
  type EmailConnectionState,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { deleteNamedEntryRoute, namedEntrySchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import { uuidv7 } from '../../state/ids.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { WfxRecord } from '../../state/records.js';
import { emailPasswordContext } from '../../state/secret-fields.js';
import type { EmailConnection, WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

export interface EmailConnectionRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  /** Seals a password as it comes in (the email trigger opens it to log in). */
  readonly secrets: SecretBox;
  readonly now?: () => Date;
  /** Each connection's watch (the email triggers'); without it, views carry no `state`. */
  readonly stateOf?: (connectionId: string) => EmailConnectionState;
}

/** A connection as the API shows it: never the password; its watch's state when known. */
function view(c: EmailConnection, stateOf?: (connectionId: string) => EmailConnectionState): ConnectionView {
  const { password: _password, ...rest } = c;
  return { ...rest, hasPassword: true, ...(stateOf && { state: stateOf(c.connectionId) }) };
}

/** /admin/email-connections: the IMAP mailboxes email triggers watch (permission ADMIN). */
export function emailConnectionRoutes(fastify: FastifyInstance, deps: EmailConnectionRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue, secrets } = deps;
  const now = deps.now ?? (() => new Date());
  const admin = { auth: { permission: 'ADMIN' as const } };
  const find = (caller: Caller, name: string, named?: string) => {
    const organization = actingOrganization(caller, named);
    const c = Object.values(store.state.emailConnections).find(
      (x) => x.organization === organization && x.name === name,
    );
    if (!c) throw new WfxError('NOT_FOUND', `no email connection ${name}`);
    return c;
  };

  app.post('/admin/email-connections', {
    config: admin,
    schema: {
      tags: ['email'],
      summary: 'Add an IMAP connection for email triggers (the password is never returned)',
      querystring: OrganizationQuery,
      body: CreateConnectionBody,
    },
    handler: async (request, reply) => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const b = request.body as WithDefaults<CreateConnectionBody, 'security' | 'mailbox'>;
      if (
        Object.values(store.state.emailConnections).some((c) => c.organization === organization && c.name === b.name)
      ) {
        throw new WfxError('VALIDATION_ERROR', `an email connection named ${b.name} exists already`);
      }
      const at = now().toISOString();
      const connectionId = uuidv7(now());
      const connection: EmailConnection = {
        connectionId,
        name: b.name,
        organization,
        host: b.host,
        port: b.port ?? (b.security === 'TLS' ? 993 : 143),
        security: b.security,
        user: b.user,
        // Sealed here, before its record exists: the journal never holds it in plain text.
        password: secrets.seal(b.password, emailPasswordContext({ organization, connectionId })),
        mailbox: b.mailbox,
        createdAt: at,
        updatedAt: at,
      };
      await catalogue.saveConnection(connection);
      return reply.status(201).send(view(connection));
    },
  });

  app.get('/admin/email-connections', {
    config: admin,
    schema: {
      tags: ['email'],
      summary: 'IMAP connections (no passwords), each with its state: connected, last error, last poll',
      querystring: OrganizationQuery,
    },
    handler: async (request): Promise<{ items: ConnectionView[] }> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.values(store.state.emailConnections)
        .filter((c) => org === null || c.organization === org)
        .map((c) => view(c, deps.stateOf));
      return { items };
    },
  });

  app.get('/admin/email-connections/:name', {
    config: admin,
    schema: namedEntrySchema(['email'], 'One IMAP connection (no password)', ConnectionParams),
    handler: async (request) =>
      view(find(request.caller!, request.params.name, request.query.organization), deps.stateOf),
  });

  app.patch('/admin/email-connections/:name', {
    config: admin,
    schema: namedEntrySchema(
      ['email'],
      'Change an IMAP connection (host, port, security, user, password, mailbox)',
      ConnectionParams,
      { body: UpdateConnectionBody },
    ),
    handler: async (request) => {
      const c = find(request.caller!, request.params.name, request.query.organization);
      const { password, ...changes } = request.body;
      const connection: EmailConnection = {
        ...c,
        ...changes,
        ...(password !== undefined && { password: secrets.seal(password, emailPasswordContext(c)) }),
        updatedAt: now().toISOString(),
      };
      await catalogue.saveConnection(connection);
      return view(connection);
    },
  });

  deleteNamedEntryRoute(fastify, '/admin/email-connections/:name', {
    config: admin,
    tags: ['email'],
    summary: 'Remove an IMAP connection',
    params: ConnectionParams,
    find,
    remove: (entry) => catalogue.deleteConnection(entry.connectionId),
  });
}
