/* Copying to the terminal's clipboard: OSC 52, which terminals and tmux pass on (no native tool needed). */

const ESC = '\u001b';
const BEL = '\u0007';

/**
 * The OSC 52 sequence that puts `text` on the clipboard (pure). Inside tmux it is wrapped in a
 * DCS passthrough (its ESCs doubled), so tmux hands it to the outer terminal.
 */
export function osc52(text: string, tmux: boolean): string {
  const seq = `${ESC}]52;c;${Buffer.from(text, 'utf8').toString('base64')}${BEL}`;
  return tmux ? `${ESC}Ptmux;${seq.replaceAll(ESC, ESC + ESC)}${ESC}\\` : seq;
}

/** Puts text on the clipboard; the TUI's screens get one (tests inject theirs). */
export type Copy = (text: string) => void;

/**
 * A Copy that writes OSC 52 to `write` (the terminal), wrapped for tmux when `env.TMUX` is set.
 * A terminal that ignores OSC 52 copies nothing: the screen shows the text too, to select by mouse.
 */
export function terminalCopy(
  write: (bytes: string) => void = (bytes) => void process.stdout.write(bytes),
  env: NodeJS.ProcessEnv = process.env,
): Copy {
  return (text) => write(osc52(text, Boolean(env.TMUX)));
}
