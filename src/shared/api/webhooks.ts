/* Webhook registrations (/admin/webhooks) and the receive endpoint (POST /webhook/receive/{token}). Answers are types only. */
import { Type, type Static } from './schema.js';
import { PROVIDERS, type CustomScheme, type Provider } from '../webhooks/providers.js';
import { ENVIRONMENTS, Items, Name, StringEnum, type Environment } from './common.js';

/** The environment of a webhook endpoint: ALL for a SHARED registration's one endpoint. */
export const ENDPOINT_ENVIRONMENTS = ['ALL', ...ENVIRONMENTS] as const;
/** An endpoint's environment (one of ENDPOINT_ENVIRONMENTS). */
export type EndpointEnvironment = 'ALL' | Environment;

/** Path parameters of /admin/webhooks/{name}. */
export const WebhookParams = Type.Object({ name: Name });
export type WebhookParams = Static<typeof WebhookParams>;

/** Path parameters of POST /webhook/receive/{token}. */
export const ReceiveParams = Type.Object({ token: Type.String({ maxLength: 200 }) });

/** Body of POST /admin/webhooks (CUSTOM providers name their signature scheme). */
export const RegisterWebhookBody = Type.Object(
  {
    name: Name,
    provider: StringEnum(PROVIDERS),
    environmentMode: Type.Optional(StringEnum(['SHARED', 'PER_ENVIRONMENT'], { default: 'SHARED' })),
    authType: Type.Optional(StringEnum(['HMAC', 'NONE'], { default: 'HMAC' })),
    secret: Type.Optional(
      Type.String({ minLength: 8, maxLength: 500, description: 'the signing secret; generated when absent' }),
    ),
    signatureHeader: Type.Optional(Type.String({ maxLength: 100 })),
    algorithm: Type.Optional(StringEnum(['sha1', 'sha256', 'sha512'])),
    encoding: Type.Optional(StringEnum(['hex', 'base64'])),
    prefix: Type.Optional(Type.String({ maxLength: 50 })),
    eventTypeHeader: Type.Optional(Type.String({ maxLength: 100 })),
    eventTypePath: Type.Optional(Type.String({ maxLength: 200 })),
    eventIdHeader: Type.Optional(Type.String({ maxLength: 100 })),
    eventIdPath: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type RegisterWebhookBody = Static<typeof RegisterWebhookBody>;

/** Body of POST /admin/webhooks/{name}/rotate. */
export const RotateBody = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENDPOINT_ENVIRONMENTS)),
    secret: Type.Optional(Type.String({ minLength: 8, maxLength: 500 })),
    previousValidFor: Type.Optional(
      Type.String({ default: '24h', description: 'a duration; 0s ends the previous secret now' }),
    ),
  },
  { additionalProperties: false },
);
export type RotateBody = Static<typeof RotateBody>;

/** Body of POST /admin/webhooks/{name}/sign. */
export const SignBody = Type.Object(
  {
    body: Type.String({ maxLength: 2_000_000, description: 'the payload, base64' }),
    environment: Type.Optional(StringEnum(ENDPOINT_ENVIRONMENTS)),
    eventType: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type SignBody = Static<typeof SignBody>;

/** A registration as the API shows it: endpoints with their URLs, never a signing secret. */
export interface WebhookView {
  readonly webhookId: string;
  readonly name: string;
  readonly organization: string;
  readonly provider: Provider;
  readonly environmentMode: 'SHARED' | 'PER_ENVIRONMENT';
  readonly authType: 'HMAC' | 'NONE';
  readonly custom?: CustomScheme;
  /** `secrets`: how many signing secrets the endpoint accepts now. */
  readonly endpoints: ReadonlyArray<{
    readonly environment: EndpointEnvironment;
    readonly url: string;
    readonly secrets: number;
  }>;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What POST /admin/webhooks answers (201): each endpoint's token, URL and, this once, secret. */
export type RegisteredWebhook = Omit<WebhookView, 'endpoints'> & {
  readonly endpoints: ReadonlyArray<{
    readonly environment: EndpointEnvironment;
    readonly token: string;
    readonly url: string;
    readonly secret: string | null;
  }>;
};

/** GET /admin/webhooks. */
export const WebhookList = Items(Type.Unsafe<WebhookView>({}));
export type WebhookList = Static<typeof WebhookList>;

/** What POST /admin/webhooks/{name}/rotate answers: the new secrets, this once. */
export interface Rotated {
  readonly name: string;
  readonly rotated: ReadonlyArray<{ readonly environment: EndpointEnvironment; readonly secret: string }>;
  readonly previousValidUntil: string | null;
}

/** What POST /admin/webhooks/{name}/sign answers: where to send the payload, with which headers. */
export interface Signed {
  readonly url: string;
  readonly environment: EndpointEnvironment;
  readonly headers: Record<string, string>;
}

/** What happened to one delivery: what a developer reads when a delivery "did nothing". */
export interface DeliveryRecord {
  readonly deliveryId: string;
  readonly receivedAt: string;
  readonly environment: EndpointEnvironment;
  readonly eventType: string | null;
  readonly eventId: string | null;
  /**
   * For providers that sign the body alone with no timestamp (GitHub): a hash of the body,
   * remembered like an event id, so a captured delivery replayed with a new (unsigned) delivery
   * id is still a duplicate.
   */
  readonly bodyHash?: string;
  readonly signatureOk: boolean;
  /** Why nothing started (bad signature, duplicate, no trigger matched), if so. */
  readonly reason: string | null;
  readonly startedInstanceIds: readonly string[];
}

/** A delivery in GET /admin/webhooks/{name}/deliveries: one still pending, or one processed. */
export type DeliveryView =
  | {
      readonly deliveryId: string;
      readonly receivedAt: string;
      readonly environment: EndpointEnvironment;
      readonly pending: true;
    }
  | DeliveryRecord;

/** GET /admin/webhooks/{name}/deliveries: newest first. */
export interface DeliveryList {
  readonly name: string;
  readonly items: readonly DeliveryView[];
}

/** What DELETE of a named resource answers. */
export interface Deleted {
  readonly name: string;
  readonly deleted: true;
}
