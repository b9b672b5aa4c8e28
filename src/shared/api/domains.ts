/* Domains (/admin/domains): what external workers do for flows' domainTasks, per organization. */
import { Type, type Static } from './schema.js';
import { Name, NullableString, type CatalogueEntryView } from './common.js';

/** A domain's name: as an organization's other names (`billing`, `crm.v2`). */
export const DomainName = Name;
/** An action's name: `charge`, `send_invoice`, `refund.v2`. */
export const ACTION_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_.-]{0,99}$';

/** One action of a domain: what its input and output must be (JSON Schemas, draft-07 or 2020-12). */
export const DomainActionSpec = Type.Object(
  {
    description: Type.Optional(NullableString({ maxLength: 2000 })),
    input: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        description: "a JSON Schema of the job's input (an object; default: any object)",
      }),
    ),
    output: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({
        type: 'object',
        description: "a JSON Schema of the worker's output (default: any value)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type DomainActionSpec = Static<typeof DomainActionSpec>;

/** Body of PUT /admin/domains/{name}: the domain as a whole (registering again replaces it). */
export const RegisterDomainBody = Type.Object(
  {
    description: Type.Optional(NullableString({ maxLength: 2000 })),
    actions: Type.Unsafe<Record<string, DomainActionSpec>>({
      type: 'object',
      minProperties: 1,
      maxProperties: 200,
      propertyNames: { pattern: ACTION_NAME_PATTERN },
      additionalProperties: DomainActionSpec,
      description: 'action name -> {description, input, output}',
    }),
  },
  { additionalProperties: false },
);
export type RegisterDomainBody = Static<typeof RegisterDomainBody>;

/** Path parameters of /admin/domains/{name}. */
export const DomainParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });
export type DomainParams = Static<typeof DomainParams>;

/** A domain as the API shows it (a type only). */
export interface DomainView extends CatalogueEntryView {
  readonly description: string | null;
  /** Action name -> its schemas (each defaulted: input `{type: object}`, output `{}`). */
  readonly actions: Readonly<
    Record<
      string,
      {
        readonly description: string | null;
        readonly input: Record<string, unknown>;
        readonly output: Record<string, unknown>;
      }
    >
  >;
}

/** GET /admin/domains. */
export interface DomainList {
  readonly items: readonly DomainView[];
}
