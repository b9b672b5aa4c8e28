/**
 * What a flow's test file holds, read and checked (test-file.ts reads it): its cases, each with
 * its start, mocks, steps and expectations.
 */
import type { Environment } from '../state/state.js';

/** What a serviceTask's mock answers one call (an attempt) with. */
export type HttpMock =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly timeout: true }
  | { readonly network: string };

/** Any work node's mock that fails it: the node fails with `code` as its real work would. */
export interface FailMock {
  readonly fail: { readonly code: string; readonly message: string };
}

/**
 * A model's answer to an aiTask's or callAgent's request: a text or JSON `reply`, or the tools it
 * asks to call (`arguments` as the model writes them, an object).
 */
export type ModelMock =
  | { readonly reply: unknown }
  | {
      readonly toolCalls: ReadonlyArray<{
        readonly name: string;
        readonly arguments: Readonly<Record<string, unknown>>;
      }>;
    };

/** A domainTask's job completed by its worker with `result` as its output. */
export interface JobMock {
  readonly result: Readonly<Record<string, unknown>>;
}

/**
 * A callProcess's or a subProcess's (of a published flow) called flow replaced: a flow of its
 * own that ends at once with these variables (a subProcess merges them back).
 */
export interface CalledMock {
  readonly output: Readonly<Record<string, unknown>>;
}

/**
 * A voiceTask's work done: a transcribe's text (`heard`, in `language`, default the node's), or
 * a speak's audio file (`spoken`: made in the case, its size and length as given).
 */
export type VoiceMock =
  | { readonly heard: string; readonly language?: string }
  | { readonly spoken: { readonly durationMs?: number; readonly bytes?: number } };

/**
 * A callAgent's call of a tool of an MCP server (mocked as `AGENT.TOOL`): its structured content
 * (`result`, a JobMock's shape), its text, or the tool's own error (`error`, an `isError` result).
 */
export type McpToolMock = JobMock | { readonly text: string } | { readonly error: string };

/** One answer of a node's mock. */
export type MockAnswer = HttpMock | ModelMock | JobMock | CalledMock | VoiceMock | McpToolMock | FailMock;

/** A node's mock: the same answer for every call, or one per call in order. */
export type Mock = MockAnswer | readonly MockAnswer[];

/** What is expected of the execution at a point of the case, or at its end. */
export interface Expectation {
  readonly state?: 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
  /** Node ids in the order their instances started. */
  readonly path?: readonly string[];
  /** A subset of the variables: each named one matching (a mapping: the keys it names; a list: item by item; else equal). */
  readonly variables?: Readonly<Record<string, unknown>>;
  /** The failure's code (FAILED). */
  readonly errorCode?: string;
  /** The node the execution waits at (an input node, a catch event, a timer). */
  readonly waitingAt?: string;
}

/** One step of a case, after its start. */
export type CaseStep =
  | { readonly kind: 'expect'; readonly expect: Expectation; readonly at: string }
  | {
      readonly kind: 'answer';
      readonly node: string;
      readonly action: 'COMPLETE' | 'CANCEL';
      readonly data: Record<string, unknown>;
      readonly at: string;
    }
  | { readonly kind: 'advance'; readonly ms: number; readonly text: string; readonly at: string }
  | {
      readonly kind: 'event';
      readonly type: string;
      readonly correlationKey: string | null;
      readonly data: Record<string, unknown>;
      readonly at: string;
    };

/** One case of a test file. */
export interface TestCase {
  readonly name: string;
  readonly start: {
    /** The start's variables: a webhook's or an email's, as its trigger gives them, and `data` over them. */
    readonly data: Record<string, unknown>;
    readonly environment: Environment;
    readonly correlationKey: string | null;
    /** The trigger the start comes through, which the flow must have (one that takes it); absent: the API. */
    readonly trigger?: StartTrigger;
  };
  /** `{env.NAME}` values of the case's environment: the file's `env`, the case's over them. */
  readonly env: Readonly<Record<string, string>>;
  /** `{secret.NAME}` values, stand-ins for the real ones: the file's `secrets`, the case's over them. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly mocks: Readonly<Record<string, Mock>>;
  readonly steps: readonly CaseStep[];
  readonly expect: Expectation;
  /** Where the case stands in its file (`file:line:column`). */
  readonly at: string;
}

/** A test file read and checked. */
export interface TestFile {
  readonly file: string;
  /** The flow file, as the test file names it (relative to the test file). */
  readonly flow: string;
  /** Flows published before it (an agent's tools, flows it calls), as named. */
  readonly flows: readonly string[];
  /** Domains registered before the flows (domainTasks'), by name: their files, as named. */
  readonly domains: Readonly<Record<string, string>>;
  readonly cases: readonly TestCase[];
}

/** A problem of a test file, where it stands. */
export interface TestFileProblem {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** What a case's start came through, when not the API: checked against the flow's triggers. */
export type StartTrigger =
  | { readonly type: 'webhook'; readonly eventType: string | null }
  | { readonly type: 'email'; readonly subject: string; readonly sender: string; readonly body: string };
