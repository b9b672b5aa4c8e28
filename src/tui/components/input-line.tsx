import { Text } from 'ink';

/**
 * A one-line text field being typed into: its label, the text with a block cursor at the end
 * (inverse, so it shows without colour), and only its tail when it is longer than `width`.
 */
export function InputLine(props: {
  /** What is typed (shown bold before the text). */
  readonly label: string;
  readonly value: string;
  /** The columns the whole line may take. */
  readonly width: number;
  /** Shown dim while the field is empty. */
  readonly placeholder?: string;
}) {
  const { label, value, width, placeholder } = props;
  const room = Math.max(4, width - label.length - 2);
  const chars = Array.from(value);
  const shown = chars.length < room ? value : `…${chars.slice(chars.length - room + 2).join('')}`;
  return (
    <Text>
      <Text bold>{label}</Text> {shown}
      <Text inverse> </Text>
      {value === '' && placeholder ? <Text dimColor> {placeholder}</Text> : null}
    </Text>
  );
}
