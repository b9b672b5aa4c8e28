/* Messages and signals: POST /process/event delivers one to the executions waiting for it. */
import { Type, type Static } from './schema.js';
import { Answer, NullableString, StringEnum } from './common.js';

/** Body of POST /process/event. */
export const EventBody = Type.Object(
  {
    eventType: Type.String({ minLength: 1, maxLength: 500 }),
    correlationKey: Type.Optional(NullableString({ maxLength: 1000 })),
    data: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
    messageId: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    organization: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'system keys only: the organization to deliver in (default: default)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventBody = Static<typeof EventBody>;

/** What POST /process/event answers (a reply schema): who it resumed, or that it was buffered. */
export const EventDelivered = Answer({
  status: StringEnum(['resumed', 'buffered']),
  duplicate: Type.Optional(Type.Boolean()),
  matched: Type.Array(Answer({ processInstanceId: Type.String(), nodeId: Type.String() })),
});
export type EventDelivered = Static<typeof EventDelivered>;
