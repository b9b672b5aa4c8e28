/*
 * A callAgent's conversation (a node's `agent`) as a person reads it: one block per message
 * with its role, text wrapped and clipped, each tool call with the execution that runs it and
 * how it stands, each tool result on one line. Pure; shared by `wfx instances get` and the
 * TUI's execution view, so both word a call's state alike.
 */
import { STATUS, type AgentCall, type AgentMessage, type AgentState, type NodeView } from '../shared/api/index.js';

/** A tool call's state in a word (see callState). */
export type CallStateWord = 'refused' | 'waits its turn' | 'running' | 'done' | 'failed' | 'cancelled' | 'not started';

/**
 * How a tool call stands, from its `ok` and `childInstanceId` and whether its node still runs
 * (`open`: active or waiting). A call without an outcome when its node has ended was cut short
 * with it: the engine cancels a node's children when the node stops. Pure.
 */
export function callState(call: AgentCall, open: boolean): CallStateWord {
  if (call.ok === true) return 'done';
  // An MCP tool's call runs in no execution: one without an outcome runs, or was cut short.
  if (call.ok === false) return call.childInstanceId === null && call.mcp === undefined ? 'refused' : 'failed';
  if (call.mcp !== undefined) return open ? 'running' : 'cancelled';
  if (call.childInstanceId === null) return open ? 'waits its turn' : 'not started';
  return open ? 'running' : 'cancelled';
}

/** Whether a node instance still runs (active, or waiting). */
export const nodeOpen = (n: Pick<NodeView, 'statusCd'>): boolean =>
  n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING;

/**
 * `2 turns · 80 input + 14 output tokens · 3 tool calls: 1 done, 1 failed, 1 refused`: the run
 * so far in a line. Pure.
 */
export function transcriptSummary(agent: AgentState, open: boolean): string {
  const counts = new Map<CallStateWord, number>();
  for (const c of agent.calls) {
    const s = callState(c, open);
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  const calls =
    agent.calls.length === 0
      ? 'no tool calls'
      : `${plural(agent.calls.length, 'tool call')}: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ')}`;
  // The tokens before the calls: a screen that cuts the line keeps them (each call has its own line).
  return `${plural(agent.steps, 'turn')} · ${agent.usage.inputTokens} input + ${agent.usage.outputTokens} output tokens · ${calls}`;
}

/** A message's role, shown on its first line. */
export type TranscriptRole = AgentMessage['role'];

/** One line of a transcript. */
export interface TranscriptLine {
  /** The message's role on its first line; '' on the lines after (the text goes on under it). */
  readonly role: TranscriptRole | '';
  readonly text: string;
  /** What the text is: a message's words, a tool call, a tool's result, an error, or a note about what is shown. */
  readonly tone: 'text' | 'call' | 'result' | 'error' | 'note';
}

/** How to lay a transcript out. */
export interface TranscriptOptions {
  /** Columns a line may take, the role's gutter included (at least 40 are used). */
  readonly width: number;
  /** A message's text is clipped after this many characters (a note says how many more). */
  readonly textChars: number;
  /** A call's arguments and a tool's result are clipped after this many characters. */
  readonly resultChars: number;
  /**
   * One line per tool call and per result (cut to the width), a call's execution id cut to
   * its tail: for a screen whose rows are counted. Otherwise a call's state and whole execution
   * id go on a line under it, and a long result wraps.
   */
  readonly compact?: boolean;
  /** Said after a clipped text's note (where to read the whole). */
  readonly clipHint?: string;
}

/** Columns before a line's text: two spaces, the longest role (`assistant`), two spaces. */
export const ROLE_GUTTER = 13;

/** A transcript line as text: the role in its gutter, then the text. Pure. */
export function formatTranscriptLine(line: TranscriptLine): string {
  return `  ${line.role.padEnd(ROLE_GUTTER - 4)}  ${line.text}`.trimEnd();
}

/**
 * The lines of a callAgent's conversation: each message under its role, each assistant's tool
 * calls as `→ name(args)` with the execution running them and their state, each tool result as
 * `← name: result` (an `{"error": ...}` result as `error: ...`); last, while the node waits for
 * the model, a note saying so. No line is wider than `options.width`. Pure.
 */
export function transcriptLines(
  node: NodeView & { readonly agent: AgentState },
  options: TranscriptOptions,
): TranscriptLine[] {
  const { agent } = node;
  const open = nodeOpen(node);
  const room = Math.max(40, options.width) - ROLE_GUTTER;
  const out: TranscriptLine[] = [];
  let role: TranscriptRole | '' = '';
  const push = (text: string, tone: TranscriptLine['tone']) => {
    out.push({ role, text, tone });
    role = '';
  };
  const paragraph = (text: string, max: number, tone: TranscriptLine['tone']) => {
    const { shown, more } = clip(text.trim(), max);
    for (const l of wrap(shown, room)) push(l, tone);
    if (more > 0)
      for (const l of wrap(`… ${plural(more, 'more character')}${options.clipHint ?? ''}`, room)) push(l, 'note');
  };
  let turn = 0;
  for (const m of agent.messages) {
    role = m.role;
    if (m.role === 'tool') {
      const result = resultText(m.content);
      const text = `← ${m.name}: ${result.text}`;
      if (options.compact) push(cut(text, room), result.error ? 'error' : 'result');
      else paragraph(text, options.resultChars + m.name.length + 4, result.error ? 'error' : 'result');
      continue;
    }
    if (m.role !== 'assistant') {
      if (m.content.trim() === '') push('(empty)', 'note');
      else paragraph(m.content, options.textChars, 'text');
      continue;
    }
    turn++;
    if (m.content.trim() !== '') paragraph(m.content, options.textChars, 'text');
    for (const tc of m.toolCalls ?? []) {
      const call =
        agent.calls.find((c) => c.id === tc.id && c.step === turn) ?? agent.calls.find((c) => c.id === tc.id);
      const state = call ? callState(call, open) : null;
      const args = argumentsText(tc.arguments);
      const tone = state === 'failed' || state === 'refused' ? 'error' : 'call';
      if (options.compact) {
        const where = call?.childInstanceId ? ` ${tail(call.childInstanceId, 13)}` : '';
        const suffix = state ? ` · ${state}${where}` : '';
        const head = `→ ${tc.name}(`;
        push(cut(`${head}${cut(args, Math.max(1, room - head.length - 1 - suffix.length))})${suffix}`, room), tone);
        continue;
      }
      const clipped = clip(args, options.resultChars);
      for (const l of wrap(`→ ${tc.name}(${clipped.shown}${clipped.more > 0 ? '…' : ''})`, room)) push(l, 'call');
      const where = call?.mcp ? ` at ${call.mcp.url}` : call?.childInstanceId ? ` in ${call.childInstanceId}` : '';
      if (state) push(cut(`  ${state}${where}`, room), tone);
    }
    if (m.content.trim() === '' && !m.toolCalls?.length) push('(no text)', 'note');
  }
  if (node.statusCd === STATUS.ACTIVE) {
    role = '';
    push(`… the model is answering (turn ${agent.steps + 1})`, 'note');
  }
  return out;
}

/**
 * A call's arguments (JSON text) as `orderId: "A1", verbose: false`; text that is not a JSON
 * object as written, on one line. Pure.
 */
export function argumentsText(json: string): string {
  const parsed = parse(json);
  if (parsed.ok && isObject(parsed.value)) return entries(parsed.value);
  return oneLine(json);
}

/** A tool result (JSON text) in a line, and whether it is the `{"error": ...}` of a failed or refused call. Pure. */
export function resultText(json: string): { readonly text: string; readonly error: boolean } {
  const parsed = parse(json);
  if (!parsed.ok) return { text: oneLine(json), error: false };
  const v = parsed.value;
  if (isObject(v) && typeof v.error === 'string' && Object.keys(v).length === 1)
    return { text: `error: ${oneLine(v.error)}`, error: true };
  return { text: readable(v), error: false };
}

/** A JSON value as a person writes it: `{orderId: "A1", items: [1, 2]}` (keys unquoted where they can be). Pure. */
export function readable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(readable).join(', ')}]`;
  if (isObject(v)) return `{${entries(v)}}`;
  return JSON.stringify(v) ?? String(v);
}

function entries(o: Record<string, unknown>): string {
  return Object.entries(o)
    .map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${readable(v)}`)
    .join(', ');
}

/** `text` cut to `max` characters, and how many were left out. */
function clip(text: string, max: number): { shown: string; more: number } {
  return text.length <= max ? { shown: text, more: 0 } : { shown: text.slice(0, max), more: text.length - max };
}

/** `text` in lines of at most `width` characters, broken at spaces where it can be; its own line breaks kept. Pure. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let rest = para.trimEnd();
    if (rest === '') {
      lines.push('');
      continue;
    }
    while (rest.length > width) {
      const space = rest.lastIndexOf(' ', width);
      const at = space > width / 3 ? space : width;
      lines.push(rest.slice(0, at).trimEnd());
      rest = rest.slice(at).trimStart();
    }
    if (rest !== '') lines.push(rest);
  }
  // One blank line between paragraphs is enough.
  return lines.filter((l, i) => l !== '' || lines[i - 1] !== '');
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** An id's tail (uuidv7 ids share their heads). */
function tail(id: string, width: number): string {
  return id.length <= width ? id : `…${id.slice(-(width - 1))}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function parse(json: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(json) as unknown };
  } catch {
    return { ok: false };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
