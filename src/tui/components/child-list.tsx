import { Text } from 'ink';
import type { ChildGroup } from '../../client/child-tree.js';
import { cut, fit, shortId, stateView } from '../format.js';

/** Columns of a child's id: its tail, which tells uuidv7 ids of one loop apart. */
const ID = 13;

/**
 * The child executions a node started, one line each under the node (its tail id, state, flow),
 * the ones left out counted first (`… 45 more`); the selected one marked `›`, for enter to open.
 */
export function ChildList(props: {
  /** The node's children, as useChildren read them. */
  readonly group: ChildGroup;
  /** The id of the selected child (anywhere in the view), or null. */
  readonly selected: string | null;
  /** Terminal columns: a line never goes past them. */
  readonly width: number;
}) {
  const { group, selected, width } = props;
  const more = group.total - group.shown.length;
  return (
    <>
      {more > 0 && <Text dimColor>{`  ├─ … ${more} more`}</Text>}
      {group.shown.map((c, i) => {
        const branch = i === group.shown.length - 1 ? '└─' : '├─';
        const mark = c.id === selected ? '›' : ' ';
        const v = c.stateCd === null ? null : stateView(c.stateCd);
        const flow = cut(c.processName ?? '', Math.max(0, width - 34));
        return (
          <Text key={c.id} inverse={c.id === selected}>
            {`${mark} ${branch} ${fit(shortId(c.id, ID), ID)} `}
            {v ? <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 11)}</Text> : fit('? unread', 11)}
            {` ${flow}`}
          </Text>
        );
      })}
    </>
  );
}
