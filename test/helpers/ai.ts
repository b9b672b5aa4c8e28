/**
 * Small builders for tests of model calls: a provider record, a lookup over a few of them, and
 * an AiCall with test-friendly defaults (one attempt, short intervals, a small maxTokens).
 */
import type { AiCall, AiProviderLookup, AiTool } from '../../src/daemon/ai/types.js';
import type { AiProvider } from '../../src/daemon/state/state.js';

/** A provider of organization `acme`, the organization's default; `over` sets the rest (kind, baseUrl, modelPath...). */
export function aiProvider(over: Partial<AiProvider> = {}): AiProvider {
  return {
    providerId: 'provider-1',
    name: 'main',
    organization: 'acme',
    kind: 'openai-compatible',
    model: 'tiny',
    isDefault: true,
    createdAt: '2026-11-24T00:00:00.000Z',
    updatedAt: '2026-11-24T00:00:00.000Z',
    ...over,
  };
}

/** Finds among `providers` as the daemon's lookup does: by organization and name, or the default. */
export function lookupOf(...providers: AiProvider[]): AiProviderLookup {
  return (organization, name) =>
    providers.find((p) => p.organization === organization && (name === null ? p.isDefault : p.name === name));
}

/** A call to acme's default provider: a system and a user message, text, 64 tokens, seed 1, one attempt. */
export function aiCall(over: Partial<AiCall> = {}): AiCall {
  return {
    organization: 'acme',
    provider: null,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello.' },
    ],
    responseFormat: 'text',
    maxTokens: 64,
    temperature: 0.8,
    seed: 1,
    timeoutMs: 60_000,
    retry: { maxAttempts: 1, initialIntervalMs: 10, backoff: 2 },
    repairs: 1,
    ...over,
  };
}

/** A JSON Schema a tiny model can always complete under a grammar (enums and booleans: no open strings). */
export const CLASSIFY_SCHEMA = {
  type: 'object',
  properties: { label: { enum: ['spam', 'ham'] }, urgent: { type: 'boolean' } },
  required: ['label', 'urgent'],
  additionalProperties: false,
} as const;

/** Two tools a tiny model can always fill in under a grammar (enums and booleans only). */
export const TINY_MODEL_TOOLS: AiTool[] = [
  {
    name: 'lookup',
    description: 'Finds an order',
    parameters: {
      type: 'object',
      required: ['orderId'],
      additionalProperties: false,
      properties: { orderId: { enum: ['A-1', 'A-2'] } },
    },
  },
  {
    name: 'notify',
    description: 'Notifies someone',
    parameters: {
      type: 'object',
      required: ['urgent'],
      additionalProperties: false,
      properties: { urgent: { type: 'boolean' } },
    },
  },
];
