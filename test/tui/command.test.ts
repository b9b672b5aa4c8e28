import t from 'tap';
import { completeCommand, parseCommand } from '../../src/tui/command.js';

t.test('parseCommand: screen names and unique starts of them, open <id>, quit; the rest said why', async (t) => {
  t.same(parseCommand('executions'), { kind: 'screen', screen: 'executions' });
  t.same(parseCommand('exec'), { kind: 'screen', screen: 'executions' }, 'the alias');
  t.same(parseCommand('e'), { kind: 'screen', screen: 'executions' }, 'executions and exec name one screen');
  t.same(parseCommand(' TR '), { kind: 'screen', screen: 'triggers' }, 'a unique start, any case');
  t.same(parseCommand('ta'), { kind: 'screen', screen: 'tasks' });
  t.same(parseCommand('fa'), { kind: 'screen', screen: 'failures' });
  t.same(parseCommand('q'), { kind: 'quit' });
  t.same(parseCommand('quit'), { kind: 'quit' });
  t.same(parseCommand('open 01a1fe30-ed'), { kind: 'open', id: '01a1fe30-ed' });
  t.same(parseCommand('o 01a1'), { kind: 'open', id: '01a1' });
  t.same(parseCommand(''), { kind: 'none' });
  t.match(parseCommand('f'), { kind: 'unknown', problem: /flows or failures/ }, 'two screens begin so');
  t.match(parseCommand('deploy'), { kind: 'unknown', problem: /no command deploy/ });
  t.match(parseCommand('open'), { kind: 'unknown', problem: /one execution id/ });
  t.match(parseCommand('tasks now'), { kind: 'unknown', problem: /takes no argument/ });
});

t.test('completeCommand: the one name that fits, else what the names that fit share', async (t) => {
  t.equal(completeCommand('tr'), 'triggers');
  t.equal(completeCommand('op'), 'open ', 'open wants its id next');
  t.equal(completeCommand('e'), 'exec', 'executions and exec share exec');
  t.equal(completeCommand('f'), 'f', 'flows and failures share nothing more');
  t.equal(completeCommand('x'), 'x');
  t.equal(completeCommand('open 01a'), 'open 01a', 'the argument is left as it is');
});
