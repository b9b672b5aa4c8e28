import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { wfxIn } from '../../helpers/cli.js';

/** The cases of the first test file of a `--reporter json` report. */
function casesOf(json: string): Array<{ name: string; ok: boolean; failure?: { message: string } }> {
  type Report = { files: Array<{ cases: Array<{ name: string; ok: boolean; failure?: { message: string } }> }> };
  return (JSON.parse(json) as Report).files[0]!.cases;
}

/** A tool flow for the agent below: looks an order up. */
const LOOKUP = `processId: 6d4b3c85-9d73-4e2a-8a5f-8f3ba24d5e6f
name: Look up an order
inputs:
  type: object
  properties: { orderId: { type: string } }
  required: [orderId]
nodes:
  start: { type: startEvent, next: found }
  found: { type: outputNode, outputs: { status: "shipped {orderId}" }, next: end }
  end: { type: endEvent }
`;

/** An agent with the tool above, then an aiTask that summarises as JSON against a schema. */
const AGENT = `processId: 7e5c4d96-ae84-4f3b-9b60-903cb35e6f70
name: Support agent
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: "Where is order {orderId}?"
    tools: [6d4b3c85-9d73-4e2a-8a5f-8f3ba24d5e6f]
    next: summary
  summary:
    type: aiTask
    prompt: "Summarise: {agent.text}"
    responseFormat: json
    schema: { type: object, required: [mood], properties: { mood: { type: string } } }
    next: end
  end: { type: endEvent }
`;

t.test(
  'model mocks: an agent whose mocked model calls a real tool flow, a JSON answer checked as a real one',
  async (t) => {
    const cwd = t.testdir({
      'lookup.yaml': LOOKUP,
      'agent.yaml': AGENT,
      'agent.test.yaml': `flow: agent.yaml
flows: [lookup.yaml]
cases:
  - name: the agent looks the order up, then answers
    start: { data: { orderId: A1 } }
    mocks:
      agent:
        - toolCalls: [ { name: look_up_an_order, arguments: { orderId: A1 } } ]
        - reply: It has shipped.
      summary: { reply: { mood: calm } }
    expect:
      state: COMPLETED
      path: [start, agent, summary, end]
      variables:
        agent: { text: It has shipped., steps: 2, toolCalls: [ { name: look_up_an_order, arguments: { orderId: A1 }, ok: true } ] }
        summary: { data: { mood: calm } }
  - name: an answer that breaks the schema is asked again, then fails the node
    start: { data: { orderId: A1 } }
    mocks:
      agent: { reply: done }
      summary: [ { reply: { mood: 1 } }, { reply: not json } ]
    expect: { state: FAILED, errorCode: AI_OUTPUT_INVALID }
  - name: a model that fails fails the node with its code
    start: { data: { orderId: A1 } }
    mocks:
      agent: { fail: { code: AI_RATE_LIMITED, message: slow down } }
    expect: { state: FAILED, errorCode: AI_RATE_LIMITED }
  - name: a model with no mock stops the case
    start: { data: { orderId: A1 } }
    expect: { state: COMPLETED }
  - name: an HTTP answer given to a model is refused
    start: { data: { orderId: A1 } }
    mocks:
      agent: { status: 200 }
`,
    });
    const r = await wfxIn(['test', '--reporter', 'json'], { cwd });
    t.equal(r.code, 1, r.stderr);
    const cases = casesOf(r.stdout);
    t.same(
      cases.map((c) => c.ok),
      [true, true, true, false, false],
      cases.map((c) => `${c.name}: ${c.failure?.message ?? 'ok'}`).join('\n'),
    );
    t.equal(cases[3]!.failure!.message, 'NO_MOCK: aiTask or callAgent "agent" has no mock: give it one under mocks');
    t.equal(cases[4]!.failure!.message, '"agent" is an aiTask or callAgent: mock it with reply, toolCalls or fail');
  },
);

const BILLING = `description: payments
actions:
  charge:
    input: { type: object, required: [amount], properties: { amount: { type: number } } }
    output: { type: object, required: [receipt], properties: { receipt: { type: string } } }
`;

const CHARGE = `processId: 8f6d5ea7-bf95-4a4c-8c71-a14dc46f7081
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge:
    type: domainTask
    domain: billing
    action: charge
    input: { amount: "{amount}" }
    retry: { maxAttempts: 2, initialInterval: 1m }
    next: done
  done: { type: endEvent }
`;

t.test("domainTask mocks answer each job as its worker would, through the action's schemas", async (t) => {
  const cwd = t.testdir({
    'billing.domain.yaml': BILLING,
    'charge.yaml': CHARGE,
    'charge.test.yaml': `flow: charge.yaml
domains: { billing: billing.domain.yaml }
cases:
  - name: a worker's receipt completes the charge
    start: { data: { amount: 5 } }
    mocks: { charge: { result: { receipt: r-1 } } }
    expect: { state: COMPLETED, variables: { charge: { receipt: r-1 } } }
  - name: a failed attempt is retried after its backoff, on the test's clock
    start: { data: { amount: 5 } }
    mocks: { charge: [ { fail: { code: CARD_DECLINED, message: declined } }, { result: { receipt: r-2 } } ] }
    steps:
      - expect: { state: RUNNING, waitingAt: charge }
      - advance: 59s
      - expect: { state: RUNNING, waitingAt: charge }
      - advance: 1s
    expect: { state: COMPLETED, variables: { charge: { receipt: r-2 } } }
  - name: an output that breaks the action's schema is a failed attempt
    start: { data: { amount: 5 } }
    mocks: { charge: { result: { nope: 1 } } }
    steps: [ { advance: 1m } ]
    expect: { state: FAILED, errorCode: JOB_OUTPUT_INVALID }
`,
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /3 passed, 0 failed/);

  const bad = t.testdir({
    'billing.domain.yaml': 'actions:\n  charge:\n    input: { type: string }\n',
    'charge.yaml': CHARGE,
    'charge.test.yaml': 'flow: charge.yaml\ndomains: { billing: billing.domain.yaml }\ncases:\n  - name: x\n',
  });
  const refused = await wfxIn(['test'], { cwd: bad });
  t.equal(refused.code, 2);
  t.match(
    refused.stdout,
    /^billing\.domain\.yaml: domain billing: actions\.charge\.input\.type: a job's input is an object/m,
  );
});

t.test('a start through a webhook or an email: the variables its trigger gives, and the trigger checked', async (t) => {
  const cwd = t.testdir({
    'push.yaml': `processId: a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
name: On push
triggers:
  - { type: webhook, webhook: github, eventType: push }
nodes:
  start: { type: startEvent, next: note }
  note: { type: setVariable, variables: { repo: "{webhookPayload.repository.name}", kind: "{webhookEventType}" }, next: end }
  end: { type: endEvent }
`,
    'mail.yaml': `processId: b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e
name: On order mail
triggers:
  - { type: email, connection: orders, filters: { subjectContains: order, senderMatches: "@example\\\\.com$" } }
nodes:
  start: { type: startEvent, next: note }
  note: { type: setVariable, variables: { from: "{emailSender}", about: "{emailSubject}" }, next: end }
  end: { type: endEvent }
`,
    'push.test.yaml': `flow: push.yaml
cases:
  - name: a push names its repository
    start: { webhook: { eventType: push, payload: { repository: { name: wfx } } } }
    expect: { state: COMPLETED, variables: { repo: wfx, kind: push, webhookProvider: CUSTOM } }
  - name: an issue event starts nothing
    start: { webhook: { eventType: issues, payload: {} } }
`,
    'mail.test.yaml': `flow: mail.yaml
cases:
  - name: an order email
    start: { email: { from: ann@example.com, subject: New order 42, body: two chairs } }
    expect: { state: COMPLETED, variables: { from: ann@example.com, about: New order 42, emailAttachments: [] } }
  - name: a mail from elsewhere starts nothing
    start: { email: { from: eve@elsewhere.org, subject: New order } }
`,
  });
  const r = await wfxIn(['test', '--reporter', 'json'], { cwd });
  t.equal(r.code, 1);
  const files = (
    JSON.parse(r.stdout) as { files: Array<{ cases: Array<{ ok: boolean; failure?: { message: string } }> }> }
  ).files;
  const [mail, push] = files;
  t.same(
    [...mail!.cases, ...push!.cases].map((c) => c.failure?.message ?? 'ok'),
    [
      'ok',
      'TRIGGER_NOT_MATCHED: no email trigger of the flow takes this email (its filters refuse it)',
      'ok',
      'TRIGGER_NOT_MATCHED: no webhook trigger of the flow takes event issues',
    ],
  );
});

t.test('called flows: the real one from flows:, or a mock that ends at once with its output', async (t) => {
  const cwd = t.testdir({
    'child.yaml': `processId: c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f
name: Price it
nodes:
  start: { type: startEvent, next: price }
  price: { type: setVariable, variables: { price: 10 }, next: end }
  end: { type: endEvent }
`,
    'parent.yaml': `processId: d4e5f6a7-b8c9-4d0e-9f1a-3b4c5d6e7f80
name: Order with a quote
nodes:
  start: { type: startEvent, next: quote }
  quote: { type: subProcess, processId: c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f, next: notify }
  notify: { type: callProcess, processId: e5f6a7b8-c9d0-4e1f-8a2b-4c5d6e7f8091, next: end }
  end: { type: endEvent }
`,
    'parent.test.yaml': `flow: parent.yaml
flows: [child.yaml]
cases:
  - name: the real child prices it; the called flow is a mock
    mocks: { notify: { output: {} } }
    expect: { state: COMPLETED, variables: { price: 10 }, path: [start, quote, notify, end] }
  - name: a mocked child's output comes back
    mocks: { quote: { output: { price: 99 } }, notify: { output: {} } }
    expect: { state: COMPLETED, variables: { price: 99 } }
  - name: a called flow neither in flows nor mocked fails the node
    expect: { state: FAILED, errorCode: PROCESS_NOT_FOUND }
`,
  });
  const r = await wfxIn(['test'], { cwd });
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /3 passed, 0 failed/);
});

/** Transcribes an uploaded recording, routes on what was heard, and speaks a confirmation. */
const VOICEMAIL = `processId: 8f6d5e07-bf95-4a4c-8c71-a14dc46f7a81
name: Voicemail
nodes:
  start: { type: startEvent, next: hear }
  hear:
    type: voiceTask
    operation: transcribe
    audio: "{recording}"
    vocabulary: [refund, cancel]
    resultVariable: heard
    next: route
  route:
    type: ifElse
    condition: "\${heard.text == 'refund'}"
    then: say
    else: end
  say:
    type: voiceTask
    operation: speak
    text: "Your refund is on its way."
    format: mp3
    provider: speech
    resultVariable: spoken
    next: end
  end: { type: endEvent }
`;

t.test('voiceTask mocks: what a transcribe heard, the file a speak made, or a failure', async (t) => {
  const recording = `file_${'ab'.repeat(16)}`;
  const cwd = t.testdir({
    'voicemail.yaml': VOICEMAIL,
    'voicemail.test.yaml': `flow: voicemail.yaml
cases:
  - name: a refund asked for is confirmed aloud
    start: { data: { recording: ${recording} } }
    mocks:
      hear: { heard: refund }
      say: { spoken: { durationMs: 1800, bytes: 14400 } }
    expect:
      state: COMPLETED
      path: [start, hear, route, say, end]
      variables:
        heard: { text: refund, language: en }
        spoken: { name: say.mp3, mimeType: audio/mpeg, bytes: 14400, durationMs: 1800 }
  - name: anything else ends there, in the language given
    start: { data: { recording: ${recording} } }
    mocks: { hear: { heard: cancel, language: en-gb } }
    expect: { state: COMPLETED, path: [start, hear, route, end], variables: { heard: { language: en-gb } } }
  - name: the engine missing fails the node
    start: { data: { recording: ${recording} } }
    mocks: { hear: { fail: { code: VOICE_ENGINE_MISSING } } }
    expect: { state: FAILED, errorCode: VOICE_ENGINE_MISSING }
  - name: a mock of the wrong kind says which it takes
    start: { data: { recording: ${recording} } }
    mocks: { hear: { spoken: {} } }
    expect: { state: COMPLETED }
  - name: a recording that is no file fails the node before its work
    start: { data: { recording: none } }
    mocks: { hear: { heard: refund } }
    expect: { state: FAILED, errorCode: FILE_NOT_FOUND }
`,
  });
  const r = await wfxIn(['test', '--reporter', 'json'], { cwd });
  t.equal(r.code, 1, r.stderr);
  const cases = casesOf(r.stdout);
  t.same(
    cases.map((c) => c.ok),
    [true, true, true, false, true],
  );
  t.match(cases[3]!.failure!.message, '"hear" is a voiceTask that transcribes: mock it with heard or fail');

  const bad = t.testdir({
    'voicemail.yaml': VOICEMAIL,
    'voicemail.test.yaml': `flow: voicemail.yaml
cases:
  - name: x
    mocks: { say: { spoken: { durationMs: -1 } } }
`,
  });
  const refused = await wfxIn(['test'], { cwd: bad });
  t.equal(refused.code, 2);
  t.match(refused.stdout, /^voicemail\.test\.yaml:4:\d+: durationMs is a whole number, 0 or more$/m);
});

t.test("secrets: a case's stand-in values, taken as the daemon takes the real ones", async (t) => {
  const cwd = t.testdir({
    'reserve.yaml': `processId: 9a7e6f18-c0a6-4b5d-9d82-b25ed5708b92
name: Reserve
nodes:
  start: { type: startEvent, next: reserve }
  reserve:
    type: serviceTask
    url: "https://warehouse.example/reserve"
    headers: { authorization: "Bearer {secret.TOKEN}" }
    resultVariable: reply
    next: done
  done: { type: endEvent }
`,
    'reserve.test.yaml': `flow: reserve.yaml
secrets: { TOKEN: test-token }
cases:
  - name: what the server echoes holds the name, not the value
    mocks: { reserve: { status: 200, body: { echoed: Bearer test-token } } }
    expect: { state: COMPLETED, variables: { reply: { body: { echoed: "Bearer [secret TOKEN]" } } } }
  - name: a case's own value over the file's
    secrets: { TOKEN: case-token }
    mocks: { reserve: { status: 200, body: { echoed: Bearer case-token } } }
    expect: { state: COMPLETED, variables: { reply: { body: { echoed: "Bearer [secret TOKEN]" } } } }
`,
  });
  const r = await wfxIn(['test', '--reporter', 'json'], { cwd });
  const cases = casesOf(r.stdout);
  t.same(
    cases.map((c) => c.ok),
    [true, true],
    cases.map((c) => `${c.name}: ${c.failure?.message ?? 'ok'}`).join('\n'),
  );
  const none = t.testdir({
    'reserve.yaml': readFileSync(join(cwd, 'reserve.yaml'), 'utf8'),
    'reserve.test.yaml': `flow: reserve.yaml
cases:
  - name: no value
    mocks: { reserve: { status: 200 } }
    expect: { state: FAILED, errorCode: SECRET_NOT_FOUND }
`,
  });
  const missing = await wfxIn(['test'], { cwd: none });
  t.equal(missing.code, 0, `a case without the value: the node fails with SECRET_NOT_FOUND\n${missing.stdout}`);
});
