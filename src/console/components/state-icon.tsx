/* A state's icon: a shape for each state, so that no state is told by colour alone. */
import type { IconName } from '../model/states.js';

/** Props of StateIcon. */
type Props = {
  /** The state drawn. */
  readonly icon: IconName;
  /** Size in CSS pixels (default 14). */
  readonly size?: number;
};

/** The icon's strokes and fills in a 16×16 box. */
function glyph(icon: IconName) {
  switch (icon) {
    case 'completed':
      return <path d="M3 8.5l3.2 3.2L13 4.8" class="icon-stroke" />;
    case 'failed':
      return <path d="M4 4l8 8M12 4l-8 8" class="icon-stroke" />;
    case 'active':
    case 'running':
      return <path d="M5 3.2v9.6L13 8z" class="icon-fill" />;
    case 'waiting':
      return <path d="M4.5 3.5h2.5v9H4.5zM9 3.5h2.5v9H9z" class="icon-fill" />;
    case 'cancelled':
      return <path d="M8 2.5a5.5 5.5 0 1 0 0 11a5.5 5.5 0 1 0 0-11zM4.2 11.8l7.6-7.6" class="icon-stroke" />;
    case 'timedOut':
      return <path d="M8 2.2a5.8 5.8 0 1 0 0 11.6a5.8 5.8 0 1 0 0-11.6zM8 4.6V8l2.6 1.6" class="icon-stroke" />;
  }
}

/** The icon of `icon`, hidden from assistive technology (its word is always beside it). */
export function StateIcon({ icon, size = 14 }: Props) {
  return (
    <svg
      class={`state-icon state-${icon}`}
      width={size}
      height={size}
      viewBox="0 0 16 16"
      aria-hidden="true"
      focusable="false"
    >
      {glyph(icon)}
    </svg>
  );
}
