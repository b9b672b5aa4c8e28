/**
 * Search attributes: what an execution is about (an order id, a customer), as named text values
 * that lists filter on (`GET /process/instances?where=orderId=A-1002`, `wfx instances list
 * --where`). A flow's `search:` maps each name to a template over the start data, resolved when
 * an execution of it starts (API, trigger, callProcess); a node's `search:` resolves over the variables when the node
 * completes and updates the attributes of the execution it runs in. Pure.
 */
import { resolveTemplate } from '../expr/template.js';

/** A search attribute's name: a letter, then letters, digits, `_`, `.` or `-`. */
export const SEARCH_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_.-]{0,39}$';
const NAME = new RegExp(SEARCH_NAME_PATTERN);

/** The most names one `search:` mapping, or one list's `where`, has. */
export const SEARCH_MAX_ATTRIBUTES = 16;

/** The longest value kept (characters): a longer one is cut there. */
export const SEARCH_VALUE_MAX = 200;

/** The attributes of an execution: name to value. */
export type SearchAttributes = Readonly<Record<string, string>>;

/** The JSON Schema of a `search:` mapping, a flow's or a node's. */
export function searchSchema(what: 'flow' | 'node'): Record<string, unknown> {
  return {
    type: 'object',
    description:
      what === 'flow'
        ? 'search attributes: name -> template over the start data (e.g. "{order.id}"), set when the execution starts; lists filter on them (where=name=value)'
        : "search attributes this node sets when it completes: name -> template over the variables; updates its execution's",
    maxProperties: SEARCH_MAX_ATTRIBUTES,
    propertyNames: { pattern: SEARCH_NAME_PATTERN },
    additionalProperties: { type: 'string', minLength: 1 },
  };
}

/**
 * The attributes `templates` give over `variables`: a value that resolves to nothing (a missing
 * reference, an empty text, null) is left out; any other non-text value is its JSON text.
 * Values longer than SEARCH_VALUE_MAX are cut. Pure.
 */
export function resolveSearch(
  templates: Readonly<Record<string, string>>,
  variables: Readonly<Record<string, unknown>>,
): { readonly set: Record<string, string>; readonly unset: string[] } {
  const set: Record<string, string> = {};
  const unset: string[] = [];
  for (const name of Object.keys(templates)) {
    const { value, missing } = resolveTemplate(templates[name]!, { vars: variables, env: {} });
    const text = missing.length > 0 || value === null || value === undefined ? '' : asText(value);
    if (text === '') unset.push(name);
    else set[name] = text.length > SEARCH_VALUE_MAX ? text.slice(0, SEARCH_VALUE_MAX) : text;
  }
  return { set, unset };
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `current` updated by a node's resolved `search:` (`update`): each name set takes its new
 * value, each name that resolved to nothing is removed. Null when nothing changes. Pure.
 */
export function updatedSearch(
  current: SearchAttributes | undefined,
  update: ReturnType<typeof resolveSearch>,
): SearchAttributes | null {
  const next: Record<string, string> = { ...current };
  let changed = false;
  for (const name of Object.keys(update.set))
    if (next[name] !== update.set[name]) {
      next[name] = update.set[name]!;
      changed = true;
    }
  for (const name of update.unset)
    if (name in next) {
      delete next[name];
      changed = true;
    }
  return changed ? next : null;
}

/** A `where` filter as written (`name=value`): the pair, or the reason it is not one. Pure. */
export function parseWhere(text: string): { name: string; value: string } | { error: string } {
  const eq = text.indexOf('=');
  if (eq < 0) return { error: `"${text}" is not name=value` };
  const name = text.slice(0, eq).trim();
  if (!NAME.test(name))
    return { error: `"${name}" is not a search attribute name (a letter, then letters, digits, _ . or -)` };
  return { name, value: text.slice(eq + 1) };
}

/** Whether `attributes` has every pair of `where`. Pure. */
export function searchMatches(
  attributes: SearchAttributes | undefined,
  where: ReadonlyArray<readonly [string, string]>,
): boolean {
  if (attributes === undefined) return where.length === 0;
  for (const [name, value] of where) if (!Object.hasOwn(attributes, name) || attributes[name] !== value) return false;
  return true;
}
