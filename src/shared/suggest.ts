/**
 * "Did you mean …?" for a mistyped name: the closest of the names that are allowed, by edit
 * distance (insertions, deletions, substitutions and swaps of two neighbours), when it is close
 * enough to be a typo rather than another word.
 */

/** The edit distance of `a` and `b` (optimal string alignment), or `limit + 1` once it exceeds `limit`. Pure. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** Words other form and flow tools use for values of ours (lower case): what `closestName` offers for them. */
const SYNONYMS: Readonly<Record<string, string>> = {
  dropdown: 'select',
  combobox: 'select',
  choice: 'select',
  multiselect: 'checkbox',
  checkboxes: 'checkbox',
  radiobutton: 'radio',
  text: 'textbox',
  string: 'text',
  input: 'textbox',
  integer: 'number',
  bool: 'boolean',
  list: 'array',
  upload: 'file',
  datetime: 'date',
};

/**
 * The allowed name `word` most likely mistypes, or undefined: case is ignored, and the distance
 * allowed is two edits in five of the word (at least one), so that a plural (`retries` for
 * `retry`) is caught and a short word is not matched to anything at all. Ties go to the name
 * listed first. Pure.
 */
export function closestName(word: string, allowed: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  // Another tool's word for one of ours is no few letters apart: known ones are named.
  const synonym = Object.hasOwn(SYNONYMS, w) ? SYNONYMS[w] : undefined;
  if (synonym !== undefined && synonym !== word && [...allowed].includes(synonym)) return synonym;
  const limit = Math.max(1, Math.ceil(w.length * 0.4));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of allowed) {
    if (name === word) continue;
    const d = editDistance(w, name.toLowerCase(), limit);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}
