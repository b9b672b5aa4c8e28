/**
 * Names that come from users and become keys of the state's plain objects (organizations,
 * node ids, variable names) must never be a property of Object.prototype: `__proto__` would
 * reach the prototype, and `constructor` or `toString` would read as present where nothing is.
 */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));

/** True when `name` is safe as an own key of a plain object. */
export function isSafeKey(name: string): boolean {
  return !RESERVED.has(name);
}

/** The names `isSafeKey` refuses (for JSON Schemas: `not: {enum: RESERVED_NAMES}`). */
export const RESERVED_NAMES: readonly string[] = [...RESERVED];

/** An organization name: letters, digits, `_ . -`, not starting with a punctuation, not reserved. */
export function isOrganizationName(name: unknown): name is string {
  return typeof name === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(name) && isSafeKey(name);
}
