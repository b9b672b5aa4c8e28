/** The client's calls of /admin/webhooks (WfxClient.webhooks). */
import type {
  DeliveryDetail,
  DeliveryList,
  DeliveryRecord,
  Deleted,
  RegisteredWebhook,
  RegisterWebhookBody,
  RotateBody,
  Rotated,
  SignBody,
  Signed,
  UpdateWebhookBody,
  WebhookList,
  WebhookView,
} from '../shared/api/index.js';
import type { SseEvent } from '../shared/sse.js';
import { path, withQuery, type ApiClient } from './http.js';

/** `?organization=` of admin requests, as WfxClient's. */
type Org = { readonly organization?: string };

/** The webhook calls of `client` (its transport read at each call: it is set after this is made). */
export function webhookCalls(client: { readonly http: ApiClient }) {
  return {
    /** POST /admin/webhooks: the answer holds the endpoints' tokens and secrets, this once. Throws VALIDATION_ERROR. */
    register: (body: RegisterWebhookBody, query: Org = {}): Promise<RegisteredWebhook> =>
      client.http.post<RegisteredWebhook>(withQuery('/admin/webhooks', query), body),
    /** GET /admin/webhooks. */
    list: (query: Org = {}): Promise<WebhookList> => client.http.get<WebhookList>(withQuery('/admin/webhooks', query)),
    /** GET /admin/webhooks/{name}. Throws NOT_FOUND. */
    get: (name: string, query: Org = {}): Promise<WebhookView> =>
      client.http.get<WebhookView>(withQuery(path`/admin/webhooks/${name}`, query)),
    /** PATCH /admin/webhooks/{name}: its limits (maxBodyBytes). Throws NOT_FOUND, VALIDATION_ERROR. */
    update: (name: string, body: UpdateWebhookBody, query: Org = {}): Promise<WebhookView> =>
      client.http.request<WebhookView>('PATCH', withQuery(path`/admin/webhooks/${name}`, query), body),
    /** DELETE /admin/webhooks/{name}. Throws NOT_FOUND. */
    delete: (name: string, query: Org = {}): Promise<Deleted> =>
      client.http.request<Deleted>('DELETE', withQuery(path`/admin/webhooks/${name}`, query)),
    /** POST /admin/webhooks/{name}/rotate: the new secrets, this once. Throws NOT_FOUND, VALIDATION_ERROR. */
    rotate: (name: string, body: RotateBody, query: Org = {}): Promise<Rotated> =>
      client.http.post<Rotated>(withQuery(path`/admin/webhooks/${name}/rotate`, query), body),
    /** POST /admin/webhooks/{name}/sign: headers that sign a test payload. Throws NOT_FOUND, VALIDATION_ERROR. */
    sign: (name: string, body: SignBody, query: Org = {}): Promise<Signed> =>
      client.http.post<Signed>(withQuery(path`/admin/webhooks/${name}/sign`, query), body),
    /** GET /admin/webhooks/{name}/deliveries: newest first. Throws NOT_FOUND. */
    deliveries: (name: string, query: Org = {}): Promise<DeliveryList> =>
      client.http.get<DeliveryList>(withQuery(path`/admin/webhooks/${name}/deliveries`, query)),
    /** GET /admin/webhooks/{name}/deliveries/{deliveryId}: its record, kept headers and body. Throws NOT_FOUND. */
    delivery: (name: string, deliveryId: string, query: Org = {}): Promise<DeliveryDetail> =>
      client.http.get<DeliveryDetail>(withQuery(path`/admin/webhooks/${name}/deliveries/${deliveryId}`, query)),
    /**
     * POST /admin/webhooks/{name}/deliveries/{deliveryId}/redeliver: the new delivery's record.
     * Throws NOT_FOUND, DELIVERY_NOT_REDELIVERABLE, DELIVERY_BODY_NOT_KEPT.
     */
    redeliver: (name: string, deliveryId: string, query: Org = {}): Promise<DeliveryRecord> =>
      client.http.post<DeliveryRecord>(
        withQuery(path`/admin/webhooks/${name}/deliveries/${deliveryId}/redeliver`, query),
        {},
      ),
    /** GET /admin/webhooks/{name}/deliveries/stream: each delivery as it is processed (`event: delivery`). Throws NOT_FOUND. */
    streamDeliveries: (name: string, signal?: AbortSignal, query: Org = {}): AsyncGenerator<SseEvent> =>
      client.http.stream(withQuery(path`/admin/webhooks/${name}/deliveries/stream`, query), undefined, signal),
  };
}
