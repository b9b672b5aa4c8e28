/* A modal question with two answers (the browser's <dialog>: focus kept inside, Escape answers no). */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** Props of ConfirmDialog. */
type Props = {
  readonly open: boolean;
  readonly title: string;
  readonly message: string;
  /** The words of the button that goes ahead. */
  readonly confirm: string;
  /** The words of the button that does not. */
  readonly dismiss: string;
  /** Called with the answer (Escape and closing are a no). */
  readonly onAnswer: (yes: boolean) => void;
  /** Fields asked with the question (between the message and the buttons). */
  readonly children?: ComponentChildren;
  /** The id of its title (default `confirm-title`): unique when a page holds several. */
  readonly titleId?: string;
  /** How the button that goes ahead looks: `danger` (default) for what cannot be undone, `primary` for what repairs or repeats. */
  readonly tone?: 'danger' | 'primary';
};

/** Asks `message`; the answer comes to onAnswer. */
export function ConfirmDialog(props: Props) {
  const { open, title, message, confirm, dismiss, onAnswer, children, titleId, tone = 'danger' } = props;
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId ?? 'confirm-title'} onCancel={() => onAnswer(false)}>
      <h2 id={titleId ?? 'confirm-title'}>{title}</h2>
      <p>{message}</p>
      {children}
      <div class="dialog-buttons">
        <button type="button" onClick={() => onAnswer(false)} autofocus>
          {dismiss}
        </button>
        <button type="button" class={tone} onClick={() => onAnswer(true)}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}
