/**
 * Where a flow may name a secret: `{secret.NAME}` only in a serviceTask's url, headers, query and
 * body, and a callAgent's MCP servers' headers, which the daemon fills in as the request goes
 * out, and in a domainTask's input, filled in as a worker activates the job. Anywhere else its value could be copied into variables (a
 * setVariable, an output, a message), and from there into history, logs and answers: the flow
 * is refused at publish (SECRET_NOT_ALLOWED). Pure.
 */
import { findReferences } from '../expr/template.js';
import { isRecord } from '../json-object.js';
import type { At } from './problems.js';
import { nodesWithin, type FlowDefinition, type FlowNode } from './types.js';

/** The properties of each node type that may hold `{secret.NAME}`. */
const SECRET_PLACES: Readonly<Record<string, ReadonlySet<string>>> = {
  serviceTask: new Set(['url', 'headers', 'query', 'body']),
  domainTask: new Set(['input']),
};
/** A secret's name, as `wfx secrets set` takes it. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reports each `{secret...}` reference of node `id` (at `path`) that is not where a secret may be. Bodies are checked as their own nodes. */
export function checkSecretRefs(node: FlowNode, path: readonly (string | number)[], at: At): void {
  const walk = (value: unknown, here: readonly (string | number)[]): void => {
    if (typeof value === 'string') {
      if (!value.includes('{secret')) return;
      for (const ref of findReferences(value)) {
        const segments = ref.split('.');
        if (segments[0] !== 'secret') continue;
        const allowed =
          SECRET_PLACES[node.type]?.has(String(here[path.length])) === true ||
          (node.type === 'callAgent' && isMcpHeader(here.slice(path.length)));
        if (segments.length !== 2 || !SECRET_NAME.test(segments[1]!))
          at('SECRET_NOT_ALLOWED', here, `{${ref}} is not a secret's name: write {secret.NAME}`);
        else if (!allowed)
          at(
            'SECRET_NOT_ALLOWED',
            here,
            `{${ref}} may be used only in a serviceTask's url, headers, query and body and a callAgent's MCP headers, filled in as the request goes out, and a domainTask's input, filled in as a worker takes the job: elsewhere its value could be copied into variables`,
          );
      }
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...here, i]));
    else if (isRecord(value))
      for (const [k, v] of Object.entries(value)) {
        // A body's nodes are checked as nodes; a script is code, not a template.
        if (here.length === path.length && (k === 'nodes' || k === 'script')) continue;
        walk(v, [...here, k]);
      }
  };
  walk(node, path);
}

/** The names of the secrets a valid flow's serviceTasks and domainTasks name (in bodies too), sorted. */
export function secretNamesOf(definition: FlowDefinition): string[] {
  const names = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.includes('{secret'))
        for (const ref of findReferences(value)) {
          const [head, name, ...rest] = ref.split('.');
          if (head === 'secret' && name !== undefined && rest.length === 0) names.add(name);
        }
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (isRecord(value))
      for (const [k, v] of Object.entries(value)) {
        walk(k);
        walk(v);
      }
  };
  for (const { node } of nodesWithin(definition.nodes)) {
    for (const place of SECRET_PLACES[node.type] ?? []) walk((node as unknown as Record<string, unknown>)[place]);
    if (node.type === 'callAgent')
      for (const spec of node.tools) if (typeof spec !== 'string' && 'mcp' in spec) walk(spec.mcp.headers);
  }
  return [...names].sort();
}

/** Whether a property path inside a callAgent is one of its MCP servers' headers (`tools.0.mcp.headers.X`). */
const isMcpHeader = (rel: readonly (string | number)[]): boolean =>
  rel[0] === 'tools' && rel[2] === 'mcp' && rel[3] === 'headers';
