/* IMAP connections for email triggers (/admin/email-connections). Answers are types only. */
import { Type, type Static } from './schema.js';
import { Name, PatchBody, StringEnum, type CatalogueEntryView } from './common.js';

/** How a connection talks to its IMAP server: TLS from the start, STARTTLS, or plain (local test servers). */
export const EMAIL_SECURITY = ['TLS', 'STARTTLS', 'NONE'] as const;

/** The fields of a connection a caller sets. */
const fields = {
  host: Type.String({ minLength: 1, maxLength: 255 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  security: StringEnum(EMAIL_SECURITY),
  user: Type.String({ minLength: 1, maxLength: 500 }),
  password: Type.String({ minLength: 1, maxLength: 2000 }),
  mailbox: Type.String({ minLength: 1, maxLength: 500 }),
};

/** Path parameters of /admin/email-connections/{name}. */
export const ConnectionParams = Type.Object({ name: Name });
export type ConnectionParams = Static<typeof ConnectionParams>;

/** Body of POST /admin/email-connections (port default: 993 with TLS, else 143). */
export const CreateConnectionBody = Type.Object(
  {
    name: Name,
    host: fields.host,
    port: Type.Optional(fields.port),
    security: Type.Optional(StringEnum(EMAIL_SECURITY, { default: 'TLS' })),
    user: fields.user,
    password: fields.password,
    mailbox: Type.Optional(Type.String({ minLength: 1, maxLength: 500, default: 'INBOX' })),
  },
  { additionalProperties: false },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

/** Body of PATCH /admin/email-connections/{name}: at least one field. */
export const UpdateConnectionBody = PatchBody({
  host: Type.Optional(fields.host),
  port: Type.Optional(fields.port),
  security: Type.Optional(fields.security),
  user: Type.Optional(fields.user),
  password: Type.Optional(fields.password),
  mailbox: Type.Optional(fields.mailbox),
});
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

/** A connection as the API shows it: never the password. */
export interface ConnectionView extends CatalogueEntryView {
  readonly connectionId: string;
  readonly host: string;
  readonly port: number;
  readonly security: (typeof EMAIL_SECURITY)[number];
  readonly user: string;
  readonly mailbox: string;
  readonly hasPassword: true;
  /** Its watch, as the daemon running the triggers sees it (absent where none is known). */
  readonly state?: EmailConnectionState;
}

/** What the watch of a connection says (GET /admin/email-connections `state`). */
export interface EmailConnectionState {
  /** Whether an active email trigger names it, so that the daemon keeps a connection to it. */
  readonly watched: boolean;
  /** Logged in, the mailbox open. */
  readonly connected: boolean;
  /** The server's (or the login's) last error, until a connection succeeds. */
  readonly lastError: string | null;
  /** When the mailbox was last looked at for unseen mail. */
  readonly lastPoll: string | null;
}
