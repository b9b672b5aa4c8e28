import { Box, Text } from 'ink';
import { TEXT_HINT, type Draft } from '../answer.js';
import { clock, duration } from '../format.js';
import type { Task } from '../hooks/use-tasks.js';
import { ChoiceField } from './choice-field.js';
import { TextField } from './text-field.js';

type Props = {
  readonly task: Task;
  readonly draft: Draft;
  /** What the validator or the API refused (`name: problem`): shown at their field, the rest below. */
  readonly problems: readonly string[];
  /** Asking whether to CANCEL the task. */
  readonly confirming: boolean;
  /** The answer is on its way. */
  readonly sending: boolean;
  /** A failure that is not about a field (the daemon away, the task already answered). */
  readonly failure: string | null;
  readonly now: Date;
};

/**
 * One task being answered: where it waits (and the agent whose tool call it is), its title
 * (resolved), then a field per input, each drawn by its type.
 */
export function AnswerForm({ task, draft, problems, confirming, sending, failure, now }: Props) {
  const problemOf = (name: string) => {
    const p = problems.find((x) => x.startsWith(`${name}: `));
    return p ? p.slice(name.length + 2) : null;
  };
  const loose = problems.filter((p) => !draft.fields.some((f) => p.startsWith(`${f.name}: `)));
  const form = task.inputType === 'form';
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{task.processName}</Text> v{task.processVersion} · {task.nodeName} (
        {task.nodeType === 'userTask'
          ? 'user task'
          : task.nodeType === 'callAgent'
            ? 'approval of a tool call'
            : `input ${task.inputType}`}
        ) · waiting since {clock(task.waitingSince)} ({duration(task.waitingSince, null, now)})
      </Text>
      <Text dimColor>
        execution {task.processInstanceId}
        {task.correlationKey ? ` · key ${task.correlationKey}` : ''}
        {task.assignee ? ` · for ${task.assignee}` : ''}
      </Text>
      {task.agent && (
        <Text dimColor>
          a tool call of agent {task.agent.nodeName} (tool {task.agent.tool}) in execution{' '}
          {task.agent.processInstanceId}
        </Text>
      )}
      {task.approval && (
        <Box flexDirection="column" marginTop={1}>
          <Text>
            the agent asks to call <Text bold>{task.approval.tool}</Text>
            {task.approval.server ? ` at ${task.approval.server}` : ''}: complete runs it (edit the arguments to change
            them), cancel refuses it
          </Text>
          {task.approval.reasoning !== null && <Text dimColor>it said: {task.approval.reasoning}</Text>}
        </Box>
      )}
      <Box marginY={1}>
        <Text bold>{task.formTitle ?? task.nodeName}</Text>
      </Box>
      {draft.fields.length === 0 && <Text dimColor> this form has no fields: complete sends {'{}'}</Text>}
      {draft.fields.map((f, i) =>
        f.kind === 'text' ? (
          <TextField
            key={f.name}
            label={f.label}
            value={f.value}
            focused={i === draft.focus && !confirming}
            required={f.required}
            multiline={f.multiline}
            hint={TEXT_HINT[f.read]}
            problem={problemOf(f.name)}
          />
        ) : (
          <ChoiceField
            key={f.name}
            label={f.label}
            options={f.options}
            cursor={f.cursor}
            chosen={f.chosen}
            multiple={f.multiple}
            focused={i === draft.focus && !confirming}
            required={f.required}
            inline={form}
            problem={problemOf(f.name)}
          />
        ),
      )}
      {form && draft.fields.some((f) => f.required) && <Text dimColor> * required</Text>}
      {loose.map((p) => (
        <Text key={p} color="red">
          ✖ {p}
        </Text>
      ))}
      {failure && <Text color="red">✖ {failure}</Text>}
      {sending && <Text dimColor>sending…</Text>}
      {confirming && (
        <Text color="yellow">
          Cancel this task ({task.nodeName} of {task.processName})? y / n
        </Text>
      )}
    </Box>
  );
}
