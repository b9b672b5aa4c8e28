/* Webhook registrations (/admin/webhooks) and the receive endpoint (POST /webhook/receive/{token}). Answers are types only. */
import { Type, type Static } from './schema.js';
import { PROVIDERS, type CustomScheme, type Provider } from '../webhooks/scheme.js';
import {
  ENVIRONMENTS,
  Items,
  Name,
  PatchBody,
  StringEnum,
  type CatalogueEntryView,
  type Environment,
} from './common.js';

/** The environment of a webhook endpoint: ALL for a SHARED registration's one endpoint. */
export const ENDPOINT_ENVIRONMENTS = ['ALL', ...ENVIRONMENTS] as const;
/** An endpoint's environment (one of ENDPOINT_ENVIRONMENTS). */
export type EndpointEnvironment = 'ALL' | Environment;

/** The largest body a registration takes unless it says otherwise (`maxBodyBytes`): 1 MiB. */
export const WEBHOOK_DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The most a registration may take (`maxBodyBytes`): 25 MiB, GitHub's own cap on a payload. */
export const WEBHOOK_MAX_BODY_BYTES_CEILING = 25 * 1024 * 1024;
/** The least a registration may set `maxBodyBytes` to: 1 KiB. */
export const WEBHOOK_MIN_BODY_BYTES = 1024;

/** A registration's largest body, in bytes (from WEBHOOK_MIN_BODY_BYTES to WEBHOOK_MAX_BODY_BYTES_CEILING). */
const MaxBodyBytes = Type.Integer({
  minimum: WEBHOOK_MIN_BODY_BYTES,
  maximum: WEBHOOK_MAX_BODY_BYTES_CEILING,
  description: `the largest body a delivery may have, in bytes; a larger one is answered 413 and logged, never kept (default ${WEBHOOK_DEFAULT_MAX_BODY_BYTES})`,
});

/** The longest a registration may keep a delivery's caller waiting for its execution's answer (`respondWithin`), in seconds. */
export const WEBHOOK_MAX_RESPOND_SECONDS = 120;

/** Seconds a delivery's caller waits for the execution it starts to answer (see RegisterWebhookBody). */
const RespondWithin = Type.Integer({
  minimum: 1,
  maximum: WEBHOOK_MAX_RESPOND_SECONDS,
  description:
    "answer the caller with the started execution's output (its `status` and `body`, else the output itself) once it ends within so many seconds; else 202 {received: true}",
});

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
    maxBodyBytes: Type.Optional(MaxBodyBytes),
    respondWithin: Type.Optional(RespondWithin),
  },
  { additionalProperties: false },
);
export type RegisterWebhookBody = Static<typeof RegisterWebhookBody>;

/** Body of PATCH /admin/webhooks/{name}: what may change without a new endpoint or secret. */
export const UpdateWebhookBody = PatchBody({
  maxBodyBytes: Type.Optional(MaxBodyBytes),
  /** null: answer at once again. */
  respondWithin: Type.Optional(Type.Unsafe<number | null>({ ...RespondWithin, type: ['integer', 'null'] })),
});
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

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
export interface WebhookView extends CatalogueEntryView {
  readonly webhookId: string;
  readonly provider: Provider;
  readonly environmentMode: 'SHARED' | 'PER_ENVIRONMENT';
  readonly authType: 'HMAC' | 'NONE';
  readonly custom?: CustomScheme;
  /** The largest body a delivery may have, in bytes. */
  readonly maxBodyBytes: number;
  /** Seconds a delivery's caller waits for the execution's answer; absent: answered at once. */
  readonly respondWithin?: number;
  /** `secrets`: how many signing secrets the endpoint accepts now. */
  readonly endpoints: ReadonlyArray<{
    readonly environment: EndpointEnvironment;
    readonly url: string;
    readonly secrets: number;
  }>;
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

/** Bytes of a body's preview in the delivery log, at most. */
export const DELIVERY_PREVIEW_BYTES = 256;

/** What the delivery log keeps of a delivery's body: never the body itself. */
export interface DeliveryBody {
  /**
   * Its size in bytes. For one refused as too large before it was read whole: what its
   * Content-Length said, or the bytes read when it was cut off (it had more).
   */
  readonly bytes: number;
  /** `sha256:<hex>` of the body, when it was read whole. */
  readonly sha256?: string;
  /**
   * Its first bytes as text: at most DELIVERY_PREVIEW_BYTES of UTF-8, cut at a character,
   * bytes that are not UTF-8 and control characters (but tab and newlines) as U+FFFD.
   */
  readonly preview?: string;
  /** True when `preview` is not the whole body (or there is a body but no preview). */
  readonly truncated?: boolean;
}

/**
 * Why a delivery was refused as it arrived, before any flow was looked at: its signature (or
 * timestamp), a replay of one delivered before, a body over the registration's limit.
 */
export type DeliveryRefusal = 'SIGNATURE' | 'DUPLICATE' | 'TOO_LARGE';

/** What happened to one delivery: what a developer reads when a delivery "did nothing". */
export interface DeliveryRecord {
  readonly deliveryId: string;
  readonly receivedAt: string;
  readonly environment: EndpointEnvironment;
  /** From its headers (and, once its signature verified, its body), at most 200 characters. */
  readonly eventType: string | null;
  readonly eventId: string | null;
  /**
   * A hash of what the provider signs, remembered like an event id, for deliveries the event id
   * does not tell apart: GitHub's (the body alone, no timestamp), so a captured delivery
   * replayed with a new (unsigned) delivery id is still a duplicate; and Slack's without an
   * `event_id` (slash commands, interactivity: the timestamp and the body), so one replayed
   * within its 5 minutes is a duplicate.
   */
  readonly bodyHash?: string;
  readonly signatureOk: boolean;
  /** Set when the delivery was refused as it arrived (see DeliveryRefusal). */
  readonly refused?: DeliveryRefusal;
  /** Why nothing started (bad signature, duplicate, no trigger matched), if so. */
  readonly reason: string | null;
  readonly startedInstanceIds: readonly string[];
  /** Its body's size, hash and first bytes (records of earlier versions have none). */
  readonly body?: DeliveryBody;
  /**
   * Set while its body and headers are kept (a verified delivery, within the registration's
   * bounds: WEBHOOK_KEPT_BYTES): `blob`, where they are kept; `bytes`, the body's size. Such a
   * delivery can be redelivered and GET .../deliveries/{deliveryId} shows them.
   */
  readonly kept?: { readonly blob: string; readonly bytes: number };
  /** For a redelivery: the delivery whose payload it processed again. */
  readonly redeliveryOf?: string;
  /** For a redelivery: who asked for it (an actor: `key:<keyId>`, `oidc:<subject>`). */
  readonly by?: string;
}

/** Bytes of bodies a registration's delivery log keeps, at most (the newest first). */
export const WEBHOOK_KEPT_BYTES = 8 * 1024 * 1024;

/** Path parameters of /admin/webhooks/{name}/deliveries/{deliveryId}. */
export const DeliveryParams = Type.Object({ name: Name, deliveryId: Type.String({ maxLength: 100 }) });
export type DeliveryParams = Static<typeof DeliveryParams>;

/**
 * GET /admin/webhooks/{name}/deliveries/{deliveryId}: its record and, while kept, its headers
 * (never a signature or credential header) and body.
 */
export type DeliveryDetail = DeliveryRecord & {
  /** The headers as kept: lower-case names; signature, secret and credential headers left out. Null when not kept. */
  readonly headers: Readonly<Record<string, string>> | null;
  /** The body once: `text` when it is UTF-8, else `base64` (the other null). Null when not kept. */
  readonly payload: { readonly base64: string | null; readonly text: string | null } | null;
};

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
  /** Deliveries the registration refused as they arrived, in all (the log keeps only the last ones). */
  readonly refused: number;
}

/** What DELETE of a named resource answers. */
export interface Deleted {
  readonly name: string;
  readonly deleted: true;
}
