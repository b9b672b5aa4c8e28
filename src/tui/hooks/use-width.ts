import { useStdout } from 'ink';

/** The columns a screen lays itself out for: the terminal's, never under 80 (the narrowest supported). */
export function useWidth(): number {
  const { stdout } = useStdout();
  return Math.max(80, stdout.columns || 80);
}
