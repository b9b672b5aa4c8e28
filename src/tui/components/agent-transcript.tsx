import { Box, Text } from 'ink';
import {
  nodeOpen,
  ROLE_GUTTER,
  transcriptLines,
  transcriptSummary,
  type TranscriptLine,
} from '../../client/transcript.js';
import type { AgentState, NodeView } from '../../shared/api/index.js';
import { cut, statusWord } from '../format.js';

const ROLE_COLOR = { system: 'gray', user: 'green', assistant: 'blue', tool: 'magenta' } as const;
const TONE_COLOR = { text: undefined, call: 'cyan', result: undefined, error: 'red', note: undefined } as const;

type Props = {
  /** A callAgent node instance with its conversation. */
  readonly node: NodeView & { readonly agent: AgentState };
  /** Rows for the conversation's lines (its heading not counted): the newest lines show. */
  readonly rows: number;
  /** Terminal columns: no line is wider. */
  readonly width: number;
};

/**
 * A callAgent's conversation, as `wfx instances get` words it: a heading with the turns, tool
 * calls and tokens, then its newest lines, each message under its role, each tool call on one
 * line with its state and the tail of its execution's id, each tool result cut to a line.
 */
export function AgentTranscript({ node, rows, width }: Props) {
  const lines = transcriptLines(node, {
    width,
    // About four lines of a message: the newest messages matter, and rows are few.
    textChars: 4 * (width - ROLE_GUTTER),
    resultChars: width,
    compact: true,
  });
  const hidden = lines.length > rows ? lines.length - rows + 1 : 0;
  const shown = lines.slice(hidden);
  // The first line shown may be a message's continuation: say whose, dimmed.
  const carried = shown[0]?.role === '' ? lines.slice(0, hidden).findLast((l) => l.role !== '')?.role : undefined;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold>conversation</Text>
        {cut(
          ` ${node.nodeName} · ${statusWord(node.statusCd)} · ${transcriptSummary(node.agent, nodeOpen(node))}`,
          Math.max(1, width - 12),
        )}
      </Text>
      {hidden > 0 && (
        <Text dimColor>
          {'  '}… {hidden} earlier line{hidden === 1 ? '' : 's'} (wfx instances get shows them all)
        </Text>
      )}
      {shown.map((l, i) => (
        <Line key={hidden + i} line={l} carried={i === 0 ? carried : undefined} />
      ))}
    </Box>
  );
}

function Line({
  line,
  carried,
}: {
  readonly line: TranscriptLine;
  readonly carried: TranscriptLine['role'] | undefined;
}) {
  const role = line.role || carried || '';
  return (
    <Text wrap="truncate">
      {'  '}
      <Text bold={line.role !== ''} dimColor={line.role === ''} color={role ? ROLE_COLOR[role] : undefined}>
        {role.padEnd(ROLE_GUTTER - 4)}
      </Text>
      {'  '}
      <Text color={TONE_COLOR[line.tone]} dimColor={line.tone === 'note'}>
        {line.text}
      </Text>
    </Text>
  );
}
