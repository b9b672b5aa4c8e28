/* What a page last said of an action it took, in a polite live region (screen readers read it as it changes). */

/** The note; empty until something is said. */
export function SaidNote({ said }: { readonly said: string }) {
  return (
    <p aria-live="polite" class="muted">
      {said}
    </p>
  );
}
