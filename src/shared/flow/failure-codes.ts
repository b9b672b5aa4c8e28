import { errorMessage } from '../errors.js';
/**
 * The one catalogue of node failure codes: the `code` of a failed node, of the variable
 * `error` a path that takes a failure gets, and of a failed execution's `data.error`. Flow
 * authors match on them (an error boundary event's `errorCode`), so they are part of the flow
 * format and stable. A test checks each code is documented in docs/flows.md.
 */

export const NODE_FAILURE_CODES = {
  // Any node
  EXPRESSION_ERROR: 'a `${...}` condition or expression does not evaluate',
  DATA_TOO_DEEP: 'the variables, output or data the node would set nest deeper than the JSON depth limit',
  INTERNAL_ERROR: 'a bug, or a work result the engine could not handle; the message names the cause',

  // Gateways, timers, composite nodes
  NO_BRANCH_MATCHED: 'no branch condition of a gateway or ifElse is true and it has no default',
  INVALID_TIMER: "a timer's `until` does not resolve to an ISO 8601 instant",
  LOOP_LIMIT: 'a loopNode would run more than `maxIterations` iterations',
  LOOP_COLLECTION: "a loopNode's `collection` does not resolve to an array",
  CHILD_CANCELLED: 'the child execution of a subProcess or loopNode was cancelled',
  CHILD_DEPTH_EXCEEDED: 'subprocesses nest, or callProcess starts chain, more than 32 deep',
  PROCESS_NOT_FOUND: 'the flow a subProcess or callProcess names does not exist',
  PROCESS_NOT_PUBLISHED: 'the flow a subProcess or callProcess names has no active version in the environment',
  VERSION_NOT_FOUND: 'the flow a subProcess or callProcess names has no such version',
  INPUT_INVALID:
    "the data a subProcess, callProcess or agent's tool call starts a flow with does not match that flow's `inputs:`",

  // The engine's limits (--limit): what one execution, tree or organization may hold
  VARIABLES_TOO_LARGE:
    "the execution's variables, or those of an execution the node starts, would pass the variables-size limit",
  BRANCH_LIMIT_EXCEEDED:
    'the execution would have more active or waiting node instances (parallel branches) than the branches limit',
  CHILD_LIMIT_EXCEEDED: 'the execution would run more child executions at once than the children limit',
  TREE_LIMIT_EXCEEDED: 'the executions running under one root would pass the tree-executions limit',
  TREE_BUDGET_EXCEEDED: 'the executions ever started under one root would pass the tree-created limit',
  EXECUTION_LIMIT_EXCEEDED: 'the organization would run more executions than the live-executions limit',
  ORG_RATE_EXCEEDED: 'the organization would start more executions a second than the org-starts-per-second limit',
  STEP_TOO_LARGE: 'the executions the node starts at once carry more data than one step may write',

  // serviceTask (and HTTP_<status>, below)
  ENV_NOT_SET:
    "the call's url, headers, query or body name an `{env.NAME}` the execution's environment has no value for; not attempted",
  HTTP_TIMEOUT: 'no answer within the timeout, after every attempt',
  HTTP_NETWORK: 'the connection failed, after every attempt',
  HTTP_BAD_REQUEST: 'the call cannot be made (a URL that is not http(s), an invalid header); not attempted',
  HTTP_RESPONSE_TOO_LARGE: 'the response body is larger than the daemon accepts',
  HTTP_RESPONSE_INVALID: 'the JSON response nests deeper than the JSON depth limit',
  HTTP_FORBIDDEN_ADDRESS: 'the network policy refused a connection of the call',
  SECRET_NOT_FOUND: "a `{secret.NAME}` the call names has no value in the execution's environment; not attempted",
  SECRET_UNREADABLE:
    'a `{secret.NAME}` value cannot be decrypted: the daemon lacks the secrets key it was sealed with, or the value was changed on disk; not attempted',

  // scriptTask
  SCRIPT_ERROR: 'the script threw or does not parse',
  SCRIPT_TIMEOUT: 'the script ran longer than its timeout',
  SCRIPT_MEMORY: 'the script allocated more than its memory limit',
  SCRIPT_RESULT: 'the return value is not JSON, or not an object without `resultVariable`',
  SCRIPT_RESULT_INVALID: 'the return value nests deeper than the JSON depth limit',
  SCRIPT_CRASHED: 'the sandbox failed',

  // aiTask (and AI_HTTP_<status>, below)
  AI_PROVIDER_NOT_FOUND: 'the provider the node names is not registered, or the organization has no default provider',
  AI_MODEL_UNAVAILABLE:
    "a local provider's model cannot be loaded (no such file, not a GGUF model, node-llama-cpp not installed)",
  AI_AUTH: 'the provider refused the API key (401, 403)',
  AI_KEY_UNREADABLE:
    "the provider's stored API key cannot be decrypted: the daemon lacks the secrets key it was encrypted with, or the value was changed on disk",
  AI_RATE_LIMITED:
    'the provider answered 429 after every attempt (each retry waited as Retry-After asked, at most `retry.maxInterval`)',
  AI_TIMEOUT: 'no complete answer within the timeout, after every attempt',
  AI_NETWORK: 'the connection to the provider failed, after every attempt',
  AI_FORBIDDEN_ADDRESS: "the daemon's network policy refused the connection to the provider; not retried",
  AI_OUTPUT_INVALID:
    'a JSON answer does not parse or does not match `schema`, after the repair requests; the message names the first violation',
  AI_TRUNCATED: 'the answer stopped at `maxTokens` or the context size (finish reason length)',
  AI_CONTENT_FILTER: "the provider's content filter stopped the answer",

  // callAgent (and the AI_ codes of its model turns)
  AGENT_MAX_STEPS:
    'the model still asks for tools after `maxSteps` turns; the transcript is kept in the result variable',
  AGENT_BUDGET_EXCEEDED:
    'the run would go over `maxToolCalls` or has gone over `maxTotalTokens`; the transcript is kept in the result variable',
  MCP_UNAVAILABLE:
    "an MCP server of the agent's tools could not be reached or listed: the connection failed, the network policy refused it, or it answered outside the protocol",
  MCP_TOOL_FAILED: 'with `failOnToolError`, a tool of an MCP server answered an error or could not be called',

  // voiceTask (and the AI_ codes of a provider)
  VOICE_ENGINE_MISSING:
    'the local speech engine (espeak-ng, pocketsphinx) is not installed, or has no model for the language; the message names the package',
  VOICE_TIMEOUT: 'the local speech engine ran longer than `timeout`',
  VOICE_FAILED: 'the speech engine failed, or the audio cannot be read (the local engine reads 16-bit PCM mono WAV)',
  FILE_NOT_FOUND: "a file reference names no file of the execution's organization",

  // memoryAction (and aiTask's memory)
  MEMORY_TOO_LARGE: 'the value to store is larger than an entry may be (256 KiB of JSON)',
  MEMORY_NOT_A_LIST: 'append, or a retrieve with `window`, on a key whose value is not a list',
  MEMORY_KEY_INVALID:
    'a namespace or key references a missing variable, or resolves to empty text or over 512 characters',

  // domainTask (and the worker's own error code, passed on)
  DOMAIN_NOT_FOUND: "the node's domain or action is no longer registered in the organization",
  JOB_INPUT_INVALID: "the resolved input does not match the action's input schema; no job is made",
  JOB_FAILED: 'a worker failed the job with no error code of its own, and no attempts are left',
  JOB_OUTPUT_INVALID: "a worker's output does not match the action's output schema, and no attempts are left",
  JOB_TIMEOUT: "no worker completed the job within the node's `timeout`",

  // The execution's own failures (its `data.error`; a subProcess node passes a child's on)
  TIMEOUT: 'a node timed out with no `timeoutFlow`',
  JOIN_DEADLOCK: 'a converging gateway waits for tokens that can no longer arrive',
  STEP_LIMIT_EXCEEDED: 'the execution created 100,000 node instances: a loop of nodes that never waits',
  LOG_LIMIT_EXCEEDED: "the execution's log passed the log-size limit",
} as const satisfies Record<string, string>;

/**
 * A serviceTask answer whose status is not accepted (after its retries): `HTTP_404`,
 * `HTTP_503`. Documented as `HTTP_<status>`.
 */
export type HttpStatusFailureCode = `HTTP_${number}`;

/**
 * A model provider's answer with an error status the other AI codes do not name (after its
 * retries): `AI_HTTP_400`, `AI_HTTP_503`. Documented as `AI_HTTP_<status>`.
 */
export type AiHttpStatusFailureCode = `AI_HTTP_${number}`;

/** Every code a node can fail with: a catalogue code or an HTTP status code. */
export type NodeFailureCode = keyof typeof NODE_FAILURE_CODES | HttpStatusFailureCode | AiHttpStatusFailureCode;

declare const passedOn: unique symbol;
/**
 * A code recorded elsewhere and passed on unchanged (a failed child execution's code, which a
 * subProcess or loopNode fails with): checked where it was made, not here.
 */
export type PassedOnFailureCode = string & { readonly [passedOn]: true };

/** `code` as a code passed on unchanged (see PassedOnFailureCode). */
export const passOn = (code: string): PassedOnFailureCode => code as PassedOnFailureCode;

const HTTP_STATUS_CODE = /^(AI_)?HTTP_[1-9][0-9]{2}$/;

/** True when `code` is a node failure code: a catalogue code, `HTTP_<status>` or `AI_HTTP_<status>`. Pure. */
export function isNodeFailureCode(code: string): code is NodeFailureCode {
  return Object.hasOwn(NODE_FAILURE_CODES, code) || HTTP_STATUS_CODE.test(code);
}

/**
 * A thrown value as a node failure: a `code` from the catalogue is kept (an expected failure
 * thrown on purpose); anything else (ENOENT, INVALID_DURATION, a TypeError) is a bug and
 * becomes INTERNAL_ERROR, its own code (if any) kept before its message for the operator.
 * Pure; never throws.
 */
export function failureOfThrown(err: unknown): { readonly code: NodeFailureCode; readonly message: string } {
  const message = errorMessage(err);
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return { code: 'INTERNAL_ERROR', message };
  return isNodeFailureCode(code) ? { code, message } : { code: 'INTERNAL_ERROR', message: `${code}: ${message}` };
}
