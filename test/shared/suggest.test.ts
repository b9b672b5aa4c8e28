import t from 'tap';
import { closestName, editDistance } from '../../src/shared/suggest.js';

t.test('editDistance counts insertions, deletions, substitutions and swaps, and stops past its limit', async (t) => {
  t.equal(editDistance('retry', 'retry', 3), 0);
  t.equal(editDistance('retries', 'retry', 3), 3);
  t.equal(editDistance('tiemout', 'timeout', 3), 1, 'a swap of neighbours is one edit');
  t.equal(editDistance('kitten', 'sitting', 3), 3);
  t.equal(editDistance('a', 'abcdefgh', 2), 3, 'past the limit: limit + 1');
  t.equal(editDistance('', 'ab', 2), 2);
});

t.test('closestName offers a near name, ignores case, and offers nothing for other words', async (t) => {
  const names = ['retry', 'timeout', 'next', 'headers', 'serviceTask'];
  t.equal(closestName('retries', names), 'retry');
  t.equal(closestName('servicetask', names), 'serviceTask');
  t.equal(closestName('Next', names), 'next');
  t.equal(closestName('header', names), 'headers');
  t.equal(closestName('colour', names), undefined);
  t.equal(closestName('nxt', ['next', 'nest']), 'next', 'ties go to the first listed');
  t.equal(closestName('ab', ['xy']), undefined, 'short words need a near match');
});

t.test("closestName names ours for another tool's word, only where ours is allowed", async (t) => {
  const inputTypes = ['textbox', 'textarea', 'number', 'date', 'select', 'checkbox', 'radio', 'file', 'form'];
  t.equal(closestName('dropdown', inputTypes), 'select');
  t.equal(closestName('Dropdown', inputTypes), 'select', 'case aside');
  t.equal(closestName('multiselect', inputTypes), 'checkbox');
  t.equal(closestName('dropdown', ['text', 'number']), undefined, 'not offered where select is not allowed');
  t.equal(closestName('constructor', inputTypes), undefined, "an object's own keys are no synonyms");
});
