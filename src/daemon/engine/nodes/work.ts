import { parseDuration } from '../../../shared/duration.js';
import { MAX_CALL_TIMEOUT_MS, MAX_SCRIPT_TIMEOUT_MS } from '../../../shared/flow/timeouts.js';
import type { RetrySpec, ScriptTaskNode, ServiceTaskNode } from '../../../shared/flow/types.js';
import { DEFAULT_RETRY } from '../../outbound/http-request.js';
import { asText, type NodeHandler, type NodeScope, type Outcome, type ResumeInput } from './handler.js';
import { SecretRefs } from '../work/secret-refs.js';

const SERVICE_TIMEOUT = '30s';
const SCRIPT_TIMEOUT = '5s';

/** A node's `retry` with its defaults (DEFAULT_RETRY) filled in, intervals in milliseconds. Pure. */
export function retryPolicy(retry: RetrySpec = {}): {
  maxAttempts: number;
  initialIntervalMs: number;
  backoff: number;
  maxIntervalMs: number;
} {
  return {
    maxAttempts: retry.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
    initialIntervalMs:
      retry.initialInterval === undefined ? DEFAULT_RETRY.initialIntervalMs : parseDuration(retry.initialInterval),
    backoff: retry.backoff ?? DEFAULT_RETRY.backoff,
    maxIntervalMs: retry.maxInterval === undefined ? DEFAULT_RETRY.maxIntervalMs : parseDuration(retry.maxInterval),
  };
}

/**
 * A work node's resume: the value of its work's result to `onValue`, or the failure of the
 * work as the node's (the one failure rule). Anything but work resuming it is a bug.
 */
export function workResult(input: ResumeInput, onValue: (value: unknown) => Outcome): Outcome {
  if (input.kind !== 'work')
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: resumed by ${input.kind}` };
  const r = input.result;
  if (r.ok) return onValue(r.value);
  // The engine drops the result of cancelled work; one reaching a node is a bug.
  return r.code === 'CANCELLED'
    ? { kind: 'fail', code: 'INTERNAL_ERROR', message: `CANCELLED: ${r.message}` }
    : { kind: 'fail', code: r.code, message: r.message, ...(r.attempts !== undefined && { attempts: r.attempts }) };
}

/**
 * serviceTask: an HTTP call with the node's properties resolved; the result `{status,
 * headers, body}` goes to `resultVariable` (default: the node id). A status not accepted
 * fails the node with HTTP_<status>, no answer in time with HTTP_TIMEOUT.
 */
export const serviceTask: NodeHandler<ServiceTaskNode> = {
  run: (node, scope) => {
    // A call made with an unset {env.NAME} left empty fails far from its cause (an invalid URL, a 401).
    const unset = unsetEnvNames([node.url, node.headers, node.query, node.body], scope);
    if (unset.length > 0) {
      const environment = scope.instance.environment;
      const refs = unset.map((name) => `{env.${name}}`).join(', ');
      const how = unset.map((name) => `wfx env set ${name} VALUE --env ${environment}`).join('; ');
      return {
        kind: 'fail',
        code: 'ENV_NOT_SET',
        message: `${refs} ${unset.length === 1 ? 'has' : 'have'} no value in ${environment}: ${how} (or the console's Environment page), then retry`,
      };
    }
    // `{secret.NAME}` resolves to stand-ins the work runner fills in as the call goes out.
    const secrets = new SecretRefs();
    const resolve = (v: unknown) => scope.resolve(v, undefined, secrets.token);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries((resolve(node.headers ?? {}) ?? {}) as Record<string, unknown>))
      headers[name] = asText(value);
    const url = asText(resolve(node.url));
    const query = (resolve(node.query ?? {}) ?? {}) as Record<string, unknown>;
    // Credentials of the environment the URL carries (in its path, say) are hidden in its log line.
    const shown = url + JSON.stringify(query);
    const redact = scope.credentials().filter((v) => shown.includes(v));
    return {
      kind: 'work',
      work: {
        kind: 'http',
        call: {
          method: (node.method ?? 'GET').toUpperCase(),
          url,
          headers,
          query,
          ...(redact.length > 0 && { redact }),
          ...(node.body !== undefined && { body: resolve(node.body) }),
          ...(secrets.used && { secrets: secrets.byToken }),
          // A flow published before the ceiling runs at the ceiling.
          timeoutMs: Math.min(parseDuration(node.timeout ?? SERVICE_TIMEOUT), MAX_CALL_TIMEOUT_MS),
          retry: retryPolicy(node.retry),
          ...(node.acceptStatus !== undefined && { acceptStatus: node.acceptStatus }),
        },
      },
    };
  },
  resume: (node, scope, input) =>
    workResult(input, (value) => ({ kind: 'next', variables: { [node.resultVariable ?? scope.nodeId]: value } })),
};

// `\{` is a literal brace and `${` a JUEL expression: neither is a reference (shared/expr/template.ts).
const ENV_REF = /(?<![\\$])\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The `{env.NAME}` names the strings of `values` (walked deep) use that have no value in `scope`'s environment, sorted, once each. */
function unsetEnvNames(values: readonly unknown[], scope: NodeScope): string[] {
  const names = new Set<string>();
  const stack = [...values];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('{env.')) for (const m of v.matchAll(ENV_REF)) names.add(m[1]!);
    } else if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === 'object' && v !== null) stack.push(...Object.keys(v), ...Object.values(v));
  }
  return [...names].filter((name) => scope.resolveChecked(`{env.${name}}`).missing.length > 0).sort();
}

/**
 * scriptTask: JavaScript in the sandbox (work/script.ts) with `vars` in scope. A returned
 * object is merged into the variables, or the returned value goes to `resultVariable`.
 */
export const scriptTask: NodeHandler<ScriptTaskNode> = {
  // The variables as they are now (a copy: the script starts once the step is durable, and later
  // steps may set others meanwhile; they are replaced only at the top level, so shallow is enough).
  run: (node, scope) => ({
    kind: 'work',
    work: {
      kind: 'script',
      run: {
        script: node.script,
        vars: { ...scope.instance.variables },
        timeoutMs: Math.min(parseDuration(node.timeout ?? SCRIPT_TIMEOUT), MAX_SCRIPT_TIMEOUT_MS),
      },
    },
  }),
  resume: (node, _scope, input) =>
    workResult(input, (value) => {
      if (node.resultVariable !== undefined)
        return { kind: 'next', variables: { [node.resultVariable]: value ?? null } };
      if (value === null || value === undefined) return { kind: 'next' };
      if (typeof value !== 'object' || Array.isArray(value)) {
        return {
          kind: 'fail',
          code: 'SCRIPT_RESULT',
          message: `the script returned ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}: return an object (merged into the variables) or set resultVariable`,
        };
      }
      return { kind: 'next', variables: value as Record<string, unknown> };
    }),
};
