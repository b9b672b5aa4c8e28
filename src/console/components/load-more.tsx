/* "Load more" under a list read a page at a time. */

/** Props of LoadMore. */
type Props = {
  /** Reads the next page. */
  readonly onLoad: () => void | Promise<void>;
  /** A page is being read: the button says so and waits. */
  readonly loading?: boolean;
};

/** The button. */
export function LoadMore({ onLoad, loading = false }: Props) {
  return (
    <button type="button" class="load-more" disabled={loading} onClick={() => void onLoad()}>
      {loading ? 'Loading…' : 'Load more'}
    </button>
  );
}
