/**
 * The JSON Schema of flow test files (`*.test.yaml`, `wfx test schema`), draft-07 as the flow
 * format's (schema.ts): what editors' YAML language servers complete and check as one types. The
 * reader (daemon/flow-tests/test-file.ts) stays the judge: it refuses what this schema refuses,
 * with file:line:column, and a test holds the two together over every test file of the project.
 */

const text = { type: 'string', minLength: 1 } as const;
const mapping = { type: 'object' } as const;

const expectation = {
  type: 'object',
  additionalProperties: false,
  properties: {
    state: { enum: ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'], description: "the execution's state" },
    path: {
      type: 'array',
      items: text,
      description: "node ids of the execution's node instances, in the order they started",
    },
    variables: {
      ...mapping,
      description: 'each named variable matches: a mapping the keys it names, a list item by item, else equal',
    },
    errorCode: { ...text, description: 'the code the execution failed with' },
    waitingAt: { ...text, description: 'the id of a node that waits' },
  },
} as const;

const answer = (properties: Record<string, unknown>, required: string[], description: string) =>
  ({ type: 'object', additionalProperties: false, required, properties, description }) as const;

const mockAnswer = {
  oneOf: [
    answer(
      {
        status: { type: 'integer', minimum: 100, maximum: 599 },
        body: {},
        headers: { type: 'object', additionalProperties: { type: 'string' } },
      },
      ['status'],
      "a serviceTask's response to one attempt",
    ),
    answer({ timeout: { const: true } }, ['timeout'], 'a serviceTask attempt that gets no answer in time'),
    answer({ network: text }, ['network'], 'a serviceTask attempt whose connection fails'),
    answer({ reply: {} }, ['reply'], "a model's answer: text, or a mapping for JSON (aiTask, callAgent)"),
    answer(
      {
        toolCalls: {
          type: 'array',
          minItems: 1,
          items: answer({ name: text, arguments: mapping }, ['name'], 'a tool the model asks to call'),
        },
      },
      ['toolCalls'],
      'a model asking to call tools (callAgent)',
    ),
    answer(
      { result: mapping },
      ['result'],
      "a domainTask's job completed with this output, or an MCP tool's structured content",
    ),
    answer({ text: { type: 'string' } }, ['text'], "an MCP tool's text result (mocks of AGENT.TOOL)"),
    answer({ error: { type: 'string' } }, ['error'], "an MCP tool's own error: the model reads it"),
    answer(
      { output: mapping },
      ['output'],
      'the flow a callProcess or subProcess calls, ending at once with these variables',
    ),
    answer(
      { heard: { type: 'string' }, language: text },
      ['heard'],
      "a voiceTask's transcribe: the text it heard (in `language`, default the node's)",
    ),
    answer(
      {
        spoken: {
          ...answer(
            { durationMs: { type: 'integer', minimum: 0 }, bytes: { type: 'integer', minimum: 0 } },
            [],
            'its length and size (the file is empty)',
          ),
          type: ['object', 'null'],
        },
      },
      ['spoken'],
      "a voiceTask's speak: the audio file it made",
    ),
    answer(
      { fail: answer({ code: text, message: { type: 'string' } }, ['code'], 'the failure') },
      ['fail'],
      'any work node failing with this code',
    ),
  ],
} as const;

const step = {
  oneOf: [
    answer({ expect: expectation }, ['expect'], 'what holds at this point'),
    answer(
      {
        answer: answer(
          { node: text, action: { enum: ['COMPLETE', 'CANCEL'] }, data: mapping },
          ['node'],
          'an answer to a waiting input node or user task',
        ),
      },
      ['answer'],
      'answer a task',
    ),
    answer(
      { advance: { ...text, description: 'a duration: 30s, 2h, 3d, PT30M' } },
      ['advance'],
      "move the test's clock",
    ),
    answer(
      {
        event: answer(
          { type: text, correlationKey: { type: ['string', 'number'] }, data: mapping },
          ['type'],
          'a message or signal',
        ),
      },
      ['event'],
      'send an event',
    ),
  ],
} as const;

/** The JSON Schema of a flow test file. */
export function testFileSchema(): Record<string, unknown> {
  const env = { type: 'object', additionalProperties: text, description: '{env.NAME} values' };
  const secrets = {
    type: 'object',
    additionalProperties: text,
    description: "{secret.NAME} values for the test (never the real ones): a serviceTask's call takes them",
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'wfx flow test file',
    type: 'object',
    additionalProperties: false,
    required: ['flow', 'cases'],
    properties: {
      flow: { ...text, description: 'the flow file under test, relative to this file' },
      flows: { type: 'array', items: text, description: 'flow files published first (tools, called flows)' },
      domains: { type: 'object', additionalProperties: text, description: 'domain files by domain name' },
      env,
      secrets,
      cases: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: text,
            start: answer(
              {
                data: mapping,
                environment: { enum: ['PRODUCTION', 'DEVELOPMENT'] },
                correlationKey: text,
                webhook: answer(
                  {
                    payload: {},
                    eventType: text,
                    headers: { type: 'object', additionalProperties: { type: 'string' } },
                    provider: text,
                    eventId: text,
                  },
                  [],
                  "a start through the flow's webhook trigger",
                ),
                email: answer(
                  {
                    from: text,
                    subject: { type: 'string' },
                    body: { type: 'string' },
                    to: { type: 'array', items: text },
                    messageId: text,
                  },
                  ['from'],
                  "a start through the flow's email trigger",
                ),
              },
              [],
              'how the execution starts',
            ),
            env,
            secrets,
            mocks: {
              type: 'object',
              additionalProperties: { oneOf: [mockAnswer, { type: 'array', minItems: 1, items: mockAnswer }] },
              description:
                "by node id (a callAgent's MCP tool: AGENT.TOOL): one answer for every call, or one per call in order",
            },
            steps: { type: 'array', items: step },
            expect: expectation,
          },
        },
      },
    },
  };
}
