/* The webhook providers and a CUSTOM registration's scheme: names and types only (the browser console reads them too). */

/** The providers wfx verifies deliveries of (providers.ts says how each signs). */
export const PROVIDERS = ['GITHUB', 'STRIPE', 'SLACK', 'STANDARD', 'CUSTOM'] as const;
/** One of PROVIDERS. */
export type Provider = (typeof PROVIDERS)[number];

/** What a CUSTOM registration says about its signature and event fields. */
export interface CustomScheme {
  readonly signatureHeader: string;
  readonly algorithm: 'sha1' | 'sha256' | 'sha512';
  readonly encoding: 'hex' | 'base64';
  /** Text before the signature in the header, e.g. `sha256=`. */
  readonly prefix?: string;
  readonly eventTypeHeader?: string;
  /** Dotted path in the JSON body, e.g. `event.type`. */
  readonly eventTypePath?: string;
  readonly eventIdHeader?: string;
  readonly eventIdPath?: string;
}
