import { Script } from 'node:vm';

/** Where a script does not parse: its message and its 1-based line and column in the script. */
export interface ScriptSyntaxError {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

/**
 * Whether a scriptTask's script parses, the way the sandbox compiles it (the body of a
 * function of `vars`): compiled only, never run. V8 here, QuickJS in the sandbox; both follow
 * the standard, so a script that compiles here compiles there. Null when it parses; a script
 * nested too deep to compile is a syntax error at its start.
 */
export function scriptSyntaxError(script: string): ScriptSyntaxError | null {
  try {
    // The wrapper's first line is its own: the script's line N is the wrapper's N + 1.
    new Script(`(function (vars) {\n${script}\n})`, { filename: 'script' });
    return null;
  } catch (err) {
    // A script nested deeper than the compiler's stack (brackets thousands deep) cannot run either.
    if (err instanceof RangeError)
      return { message: `it nests too deep to compile (${err.message})`, line: 1, column: 1 };
    if (!(err instanceof SyntaxError)) throw err;
    // V8's stack: "script:LINE", the line's source, a caret under the column, then the message.
    const [where = '', , caret = ''] = (err.stack ?? '').split('\n');
    const at = /:(\d+)$/.exec(where);
    const lines = script.split('\n');
    const line = at ? Math.max(Number(at[1]) - 1, 1) : 1;
    // Found on the wrapper's closing line: the script ended too early; point at its end.
    if (line > lines.length)
      return {
        message: `it ends before it is complete (${err.message})`,
        line: lines.length,
        column: lines.at(-1)!.length + 1,
      };
    return { message: err.message, line, column: caret.includes('^') ? caret.indexOf('^') + 1 : 1 };
  }
}
