import { Box, Text } from 'ink';
import { clock, countdown, cut, duration, fit, idColumns, shortId, stateView, statusWord } from '../format.js';
import { waitingFor } from '../../client/describe.js';
import { nodeOpen } from '../../client/transcript.js';
import type { AgentState } from '../../shared/api/index.js';
import type { Execution, LogLine, NodeView, StreamingAnswer } from '../types.js';
import type { ChildGroup } from '../../client/child-tree.js';
import { AgentTranscript } from './agent-transcript.js';
import { ChildList } from './child-list.js';

const LEVEL_COLOR = { INFO: 'white', WARN: 'yellow', ERROR: 'red' } as const;

/** The callAgent whose conversation the view shows: one still running, else the latest. */
export function agentToShow(nodes: readonly NodeView[]): (NodeView & { readonly agent: AgentState }) | null {
  const agents = nodes.filter((n): n is NodeView & { readonly agent: AgentState } => n.agent !== undefined);
  return agents.findLast(nodeOpen) ?? agents.at(-1) ?? null;
}

/** The ids of the children listed in `groups`, in the order the view shows them: what ↑↓ move through. Pure. */
export function listedChildren(groups: readonly ChildGroup[] | null | undefined): string[] {
  return (groups ?? []).flatMap((g) => g.shown.map((c) => c.id));
}

/**
 * One execution: header, node timeline (status in words) with each node's children under it, variables or error, an agent's
 * conversation (its newest lines), log tail, and below it each answer a model is streaming,
 * growing on its line until its node's log line comes.
 */
export function ExecutionView(props: {
  readonly execution: Execution;
  readonly logs: readonly LogLine[];
  /** Answers streaming in now (none: nothing shown). */
  readonly streaming?: readonly StreamingAnswer[];
  readonly now: Date;
  /** Rows for the log tail; with an agent's conversation, shared with it (most to the conversation). */
  readonly logRows: number;
  /** Terminal columns: the conversation's lines are laid out to fit. */
  readonly width: number;
  /** The child executions read so far (useChildren): listed under their node; until then a summary line. */
  readonly childGroups?: readonly ChildGroup[] | null;
  /** The selected child's id (enter opens it), or null. */
  readonly selectedChild?: string | null;
  /** Where the log is scrolled to: the count of lines up to its last shown; null (default) follows the tail. */
  readonly logEnd?: number | null;
  /** Whether the log pane has the keys (its heading is marked). */
  readonly logFocused?: boolean;
}) {
  const { execution: e, logs, now, width } = props;
  const groups = new Map((props.childGroups ?? []).map((g) => [g.nodeInstanceId, g]));
  const agent = agentToShow(e.nodes);
  // The conversation's heading and the margin above it take two of the rows.
  const talkRows = agent ? Math.max(3, Math.ceil((props.logRows - 2) * 0.6)) : 0;
  const logRows = agent ? Math.max(1, props.logRows - 2 - talkRows) : props.logRows;
  const streaming = props.streaming ?? [];
  const v = stateView(e.stateCd);
  const { error, ...variables } = e.data;
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{e.processName}</Text> v{e.processVersion} · <Text color={v.color}>{`${v.symbol} ${v.word}`}</Text> ·{' '}
        {duration(e.startTime, e.endTime, now)} · {e.processInstanceId}
      </Text>
      {e.correlationKey && <Text dimColor>correlation key {e.correlationKey}</Text>}
      {e.usage && (
        <Text dimColor>
          model usage {e.usage.calls} call{e.usage.calls === 1 ? '' : 's'}, {e.usage.inputTokens} input +{' '}
          {e.usage.outputTokens} output tokens
        </Text>
      )}
      <Box marginTop={1} flexDirection="column">
        <Text bold>{`${fit('NODE', 18)} ${fit('TYPE', 22)} ${fit('STATUS', 10)} WAITING FOR`}</Text>
        {e.nodes.map((n) => (
          <Box key={n.nodeInstanceId} flexDirection="column">
            <Text>
              {fit(n.nodeName, 18)} {fit(n.nodeType, 22)} {fit(statusWord(n.statusCd), 10)} {waitText(n, now)}
            </Text>
            {groups.has(n.nodeInstanceId) ? (
              <ChildList group={groups.get(n.nodeInstanceId)!} selected={props.selectedChild ?? null} width={width} />
            ) : (
              (n.childInstanceIds?.length ?? 0) > 0 && <Text dimColor>{childLine(n.childInstanceIds!, width)}</Text>
            )}
          </Box>
        ))}
      </Box>
      <Box marginTop={1} flexDirection="column">
        {error ? (
          <Text color="red">
            error {error.code} at {error.nodeId ?? '?'}
            {error.attempts > 1 ? ` (${error.attempts} attempts)` : ''}: {error.message}
          </Text>
        ) : null}
        <Text>
          <Text bold>variables </Text>
          {cut(JSON.stringify(variables), 300)}
        </Text>
        {e.output && (
          <Text>
            <Text bold>output </Text>
            {JSON.stringify(e.output)}
          </Text>
        )}
      </Box>
      {agent && (
        <Box marginTop={1}>
          <AgentTranscript node={agent} rows={talkRows} width={width} />
        </Box>
      )}
      <Box marginTop={1} flexDirection="column">
        <Text bold={true}>
          {props.logFocused ? '› log' : 'log'}
          <Text dimColor>{logNote(logs.length, props.logEnd ?? null)}</Text>
        </Text>
        {logTail(logs, Math.max(1, logRows - streaming.length), props.logEnd ?? null).map((l) => (
          <Text key={l.id} color={LEVEL_COLOR[l.level]}>
            {clock(l.timestamp)} {fit(l.level, 5)} {l.nodeName || 'execution'}: {l.message}
          </Text>
        ))}
        {streaming.map((a) => (
          // The end of the answer is what is new: cut from the start.
          <Text key={a.nodeInstanceId} color="cyan" wrap="truncate-start">
            {`${a.nodeId} ▍ ${a.text.replace(/\s+/g, ' ')}`}
          </Text>
        ))}
      </Box>
    </Box>
  );
}

/**
 * A node's child executions as one branch under it: how many, and the heads of the last ids
 * (enough to tell them apart), as many of the last three as `width` columns hold.
 */
export function childLine(ids: readonly string[], width = 80): string {
  let line = '';
  for (let n = Math.min(3, ids.length); n >= 1; n--) {
    const last = ids.slice(-n);
    const cols = idColumns(last, 13);
    const more = ids.length > n ? `${ids.length - n} more, ` : '';
    line = `  └─ ${ids.length} child execution${ids.length === 1 ? '' : 's'}: ${more}${last.map((id) => shortId(id, cols)).join(', ')}`;
    if (line.length <= width) break;
  }
  return line;
}

/**
 * What a node waits for, and the time left to its timer (`in 4m 12s`, `overdue 3s`) when it has
 * one; for a task answered, who answered it and when.
 */
export function waitText(n: NodeView, now: Date): string {
  if (n.statusCd !== 1 && n.answeredBy)
    return `answered by ${n.answeredBy}${n.answeredAt ? ` at ${clock(n.answeredAt)}` : ''}`;
  const what = waitingFor(n);
  const due = n.statusCd === 1 ? n.wait?.dueAt : null;
  if (!due) return what;
  return n.wait?.kind === 'timer'
    ? `timer until ${clock(due)} · ${countdown(due, now)}`
    : `${what} · due ${countdown(due, now)}`;
}

/** The log lines shown in `rows`: the tail, or those up to `end` when scrolled up (new lines do not move them). */
export function logTail<T>(logs: readonly T[], rows: number, end: number | null): readonly T[] {
  const last = end === null ? logs.length : Math.min(end, logs.length);
  return logs.slice(Math.max(0, last - rows), last);
}

/** The log heading's note: nothing while it follows the tail; scrolled up, the lines below and how to follow again. */
export function logNote(total: number, end: number | null): string {
  if (end === null || end >= total) return '';
  const below = total - end;
  return ` · scrolled up: ${below} newer line${below === 1 ? '' : 's'} below (G follows)`;
}
