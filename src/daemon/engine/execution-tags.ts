/**
 * The tags an archived execution is put to history with (history-store.ts): what the list of
 * executions filters on without reading documents. One place writes them (the archive) and
 * one reads them (execution-list.ts), both through this module.
 *
 * Positions, each appended after the ones before it, so that older history still reads:
 * 0 processId, 1 stateCd, 2 parent id ('' for a top-level execution; absent in history written
 * before it was tagged), then (absent in history written before the list of every execution)
 * 3 organization, 4 version, 5 environment, 6 failure code ('' unless failed), 7 correlation key
 * ('' for none), then (absent in history written before failures were grouped) 8 the node a
 * failed execution failed at ('' unless failed, or failed at no node), then (absent in history
 * written before trees were listed) 9 the root of its tree ('' for a top-level execution), then
 * (absent in history written before search attributes, when none had any) 10 its search
 * attributes (searchTag: '' for none). A tag
 * holds no space, `|` or control character (the frame header's rule):
 * free text is percent-encoded, and text whose encoding is longer than TEXT_TAG_MAX is kept as
 * `#` and a digest of it instead, which says "maybe" (a document read settles it).
 */
import { createHash } from 'node:crypto';
import { STATE } from '../../shared/api/index.js';
import type { Execution } from '../state/state.js';
import { PAIRS_TAG } from '../store/history-store.js';

/** Where each tag is in an execution's tag list. */
export const TAG = {
  processId: 0,
  stateCd: 1,
  parent: 2,
  organization: 3,
  version: 4,
  environment: 5,
  errorCode: 6,
  correlationKey: 7,
  failedNode: 8,
  root: 9,
  search: PAIRS_TAG,
} as const;

/** The longest free-text tag kept as text; a longer one is a digest. */
const TEXT_TAG_MAX = 128;

/**
 * A free-text value as a tag: percent-encoded (no space, `|` or control character is left), or
 * `#` and a digest when that is long or cannot be encoded (a lone surrogate). `#` never starts
 * an encoded text, so the two never meet. Pure.
 */
export function textTag(text: string): string {
  let encoded: string | null;
  try {
    encoded = encodeURIComponent(text);
  } catch {
    encoded = null;
  }
  if (encoded !== null && encoded.length <= TEXT_TAG_MAX) return encoded;
  return `#${createHash('sha256').update(text).digest('base64url').slice(0, 22)}`;
}

/** What the tags of an execution are made of: the fields it started with. */
export type Tagged = Pick<
  Execution,
  | 'processId'
  | 'parentInstanceId'
  | 'organization'
  | 'processVersion'
  | 'environment'
  | 'correlationKey'
  | 'root'
  | 'search'
>;

/** The history tags of a finished execution, in TAG's order: its fields and how it ended (`end`). Pure. */
export function executionTags(inst: Tagged, end: Pick<Execution, 'stateCd' | 'error'>): string[] {
  const code = failureCode(end);
  return [
    inst.processId,
    String(end.stateCd),
    inst.parentInstanceId ?? '',
    textTag(inst.organization),
    textTag(inst.processVersion),
    inst.environment,
    code === null ? '' : textTag(code),
    inst.correlationKey === null || inst.correlationKey === '' ? '' : textTag(inst.correlationKey),
    textTag(failedNode(end) ?? ''),
    inst.root ?? '',
    searchTag(inst.search),
  ];
}

/** The longest search attribute value a tag keeps as text; a longer one is a digest. */
const SEARCH_VALUE_TAG_MAX = 64;

/**
 * Search attributes as one tag (history-store.ts's pairs tag): `name=value` pairs in name order,
 * joined by `&`, each value percent-encoded, or `#` and its digest when that is longer than
 * SEARCH_VALUE_TAG_MAX (then a match says "maybe"); '' for none. Names have no character to
 * encode. Pure.
 */
export function searchTag(search: Readonly<Record<string, string>> | undefined): string {
  if (search === undefined) return '';
  return Object.keys(search)
    .sort()
    .map((name) => `${name}=${searchValueTag(search[name]!)}`)
    .join('&');
}

/** A search attribute's value as searchTag keeps it. Pure. */
export function searchValueTag(value: string): string {
  const tag = textTag(value);
  return tag.length <= SEARCH_VALUE_TAG_MAX
    ? tag
    : `#${createHash('sha256').update(value).digest('base64url').slice(0, 22)}`;
}

/** The failure code of an execution: its error's code when it failed, else null. Pure. */
export function failureCode(inst: Pick<Execution, 'stateCd' | 'error'>): string | null {
  return inst.stateCd === STATE.FAILED ? (inst.error?.code ?? null) : null;
}

/** The node a failed execution failed at (its error's nodeId), else null (not failed, or failed at no node). Pure. */
export function failedNode(inst: Pick<Execution, 'stateCd' | 'error'>): string | null {
  return inst.stateCd === STATE.FAILED ? (inst.error?.nodeId ?? null) : null;
}
