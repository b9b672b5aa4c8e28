/* A callAgent's conversation: each message by role, each tool call linked to the execution that ran it. */
import type { AgentCall, AgentState } from '../../shared/api/process.js';
import { StateIcon } from './state-icon.js';

/** Props of Conversation. */
type Props = {
  readonly agent: AgentState;
};

/** How a tool call stands: running (or waiting its turn), done, or failed. */
function CallStatus({ call }: { readonly call: AgentCall | undefined }) {
  if (!call) return null;
  const [icon, word] =
    call.ok === null
      ? (['running', 'running'] as const)
      : call.ok
        ? (['completed', 'done'] as const)
        : (['failed', 'failed'] as const);
  return (
    <span class={`badge state-${icon}`}>
      <StateIcon icon={icon} />
      {word}
    </span>
  );
}

/** The execution a tool call ran in, as a link; the server an MCP tool's call went to; 'no execution' when it has none (refused, or not started). */
function CallLink({ call }: { readonly call: AgentCall | undefined }) {
  if (call?.mcp) return <span class="muted">{`MCP server ${call.mcp.url}`}</span>;
  if (!call?.childInstanceId) return <span class="muted">no execution</span>;
  return <a href={`/executions/${encodeURIComponent(call.childInstanceId)}`}>{`execution ${call.childInstanceId}`}</a>;
}

/** The conversation so far, with its turns and token counts. */
export function Conversation({ agent }: Props) {
  const calls = new Map(agent.calls.map((c) => [c.id, c]));
  return (
    <div class="conversation">
      <p class="muted">
        {`${agent.steps} model turn${agent.steps === 1 ? '' : 's'}, ${agent.usage.inputTokens} tokens in, ${agent.usage.outputTokens} out`}
      </p>
      <ol class="messages">
        {agent.messages.map((m, i) => (
          <li key={i} class={`message role-${m.role}`}>
            <span class="message-role">{m.role === 'tool' ? `tool result: ${m.name}` : m.role}</span>
            {m.content !== '' && <div class="message-content">{m.content}</div>}
            {m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0 && (
              <ul class="tool-calls">
                {m.toolCalls.map((tc) => (
                  <li key={tc.id} class="tool-call">
                    <span class="tool-name">{tc.name}</span> <CallStatus call={calls.get(tc.id)} />{' '}
                    <CallLink call={calls.get(tc.id)} />
                    <pre class="tool-args">{tc.arguments}</pre>
                  </li>
                ))}
              </ul>
            )}
            {m.role === 'tool' && (
              <p class="tool-result-link">
                <CallLink call={calls.get(m.toolCallId)} />
              </p>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
