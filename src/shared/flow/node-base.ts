/** What every node of the flow format has (types.ts, work-node-types.ts). */

/** A node id, or several (a list on a non-gateway node forks parallel tokens). */
export type Next = string | readonly string[];

/** The properties every node type takes. */
export interface NodeBase {
  /** Display name (nodeName in logs); default: the node id. */
  readonly name?: string;
  readonly description?: string;
  /** Search attributes it sets on its execution when it completes: name to a template over the variables. */
  readonly search?: Readonly<Record<string, string>>;
  /** Taken when the node fails (or, on an input node, is cancelled). */
  readonly errorFlow?: string;
}
