import { Text } from 'ink';
import type { ChildGroup } from '../../client/child-tree.js';
import { cut, fit, idColumns, shortId, stateView } from '../format.js';

/** The fewest columns of a child's id (its head, as wfx takes it): more when the children's ids need them to differ. */
const ID = 13;

/**
 * The child executions a node started, one line each under the node (the head of its id, state, flow),
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
  const idWidth = idColumns(
    group.shown.map((c) => c.id),
    ID,
  );
  return (
    <>
      {more > 0 && <Text dimColor>{`  ├─ … ${more} more`}</Text>}
      {group.shown.map((c, i) => {
        const branch = i === group.shown.length - 1 ? '└─' : '├─';
        const mark = c.id === selected ? '›' : ' ';
        const v = c.stateCd === null ? null : stateView(c.stateCd);
        const flow = cut(c.processName ?? '', Math.max(0, width - 34 - (idWidth - ID)));
        return (
          <Text key={c.id} inverse={c.id === selected}>
            {`${mark} ${branch} ${fit(shortId(c.id, idWidth), idWidth)} `}
            {v ? <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 11)}</Text> : fit('? unread', 11)}
            {` ${flow}`}
          </Text>
        );
      })}
    </>
  );
}
