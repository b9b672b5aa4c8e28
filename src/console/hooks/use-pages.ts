/* A list the API gives a page at a time: the first page held like useApi's read, more appended on demand. */
import { useState } from 'preact/hooks';
import type { Call } from '../../shared/api/calls/index.js';
import { asError, send } from '../api/http.js';
import { useApi, type ApiRead } from './use-api.js';

/** A page of a list: its items and the cursor of the next (null: the last). */
type Page<T> = { readonly items: readonly T[]; readonly nextCursor: string | null };

/** The item type of pages `P`. */
type Item<P extends Page<unknown>> = P['items'][number];

/** What usePages gives: the first page's read, every item read so far, and the way to more. */
export interface Pages<P extends Page<unknown>> extends ApiRead<P> {
  /** The first page's items, then those of the pages read after it. */
  readonly items: readonly Item<P>[];
  /** Whether a next page is there to read. */
  readonly more: boolean;
  /** Reads the next page and appends it; a failure becomes `error`. */
  readonly loadMore: () => Promise<void>;
}

/**
 * The pages of `page(cursor)` (null: nothing to read): the first (undefined cursor) read as
 * useApi reads, again when its path changes or on `reload`; a new first page drops the pages
 * read after the previous one.
 */
export function usePages<P extends Page<unknown>>(page: (cursor?: string) => Call<P> | null): Pages<P> {
  const first = useApi(page());
  const [after, setAfter] = useState<{ of: P; items: readonly Item<P>[]; nextCursor: string | null } | null>(null);
  const [failed, setFailed] = useState<Error | null>(null);
  const later = after !== null && after.of === first.data ? after : null;
  const cursor = later ? later.nextCursor : (first.data?.nextCursor ?? null);
  const loadMore = async () => {
    const call = cursor === null || first.data === undefined ? null : page(cursor);
    if (call === null) return;
    try {
      const next = await send(call);
      setAfter({ of: first.data!, items: [...(later?.items ?? []), ...next.items], nextCursor: next.nextCursor });
    } catch (err) {
      setFailed(asError(err));
    }
  };
  return {
    ...first,
    error: first.error ?? failed,
    items: [...(first.data?.items ?? []), ...(later?.items ?? [])],
    more: cursor !== null,
    loadMore,
  };
}
