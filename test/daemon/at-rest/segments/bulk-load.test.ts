import '../../../setup/fixtures.js';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ExecutionIndex } from '../../../../src/daemon/state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../../../../src/daemon/state/execution-summary.js';
import {
  IMAGE_NAME,
  readImage,
  takeImage,
  writeImage,
} from '../../../../src/daemon/at-rest/segments/directory-image.js';
import { segmentName } from '../../../../src/daemon/at-rest/segments/files.js';
import { loadSegments, loadSegmentsInto } from '../../../../src/daemon/at-rest/segments/load.js';
import { SegmentSpace } from '../../../../src/daemon/at-rest/segments/space.js';
import { writeSegment, type SegmentEntry } from '../../../../src/daemon/at-rest/segments/write.js';
import {
  DOMAINS,
  FLOWS,
  KEYS,
  ORGS,
  random,
  randomId,
  randomSummary,
  TIERS,
  REFS,
} from '../../../helpers/directory-oracle.js';

// The bulk load (loadSegmentsInto: index columns straight into the directory) against the
// entries of the same segments put one by one and their removed ids removed (openSegments'
// handlers as the store uses them): every query of the two directories must answer alike.

interface Segments {
  readonly listed: number[];
  /** Every id any segment named, removed ones too. */
  readonly ids: string[];
}

/** Writes `count` segments of a seeded random mix: new ids, ids written again, ids removed. */
async function writeMix(dir: string, seed: number, count: number): Promise<Segments> {
  const rnd = random(seed);
  const live: string[] = [];
  const ids: string[] = [];
  const listed: number[] = [];
  for (let n = 1; n <= count; n++) {
    const entries: SegmentEntry[] = [];
    const inSegment = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const again = live.length > 10 && rnd() < 0.3;
      const id = again ? live[Math.floor(rnd() * live.length)]! : randomId(rnd);
      if (inSegment.has(id)) continue;
      inSegment.add(id);
      if (!again) {
        live.push(id);
        ids.push(id);
      }
      const summary: ExecutionSummary = randomSummary(rnd, id, live);
      entries.push({ id, json: JSON.stringify({ id, n }), summary });
    }
    const removed: string[] = [];
    for (let i = 0; i < 8 && live.length > 20; i++) {
      const at = Math.floor(rnd() * live.length);
      if (inSegment.has(live[at]!)) continue;
      removed.push(live[at]!);
      live[at] = live.at(-1)!;
      live.pop();
    }
    await writeSegment(dir, n, entries, removed);
    listed.push(n);
  }
  return { listed, ids };
}

/** The two directories' answers to every query over `ids`, as text, for one comparison. */
function answers(dir: ExecutionIndex, ids: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (what: string, v: unknown): void => void (out[what] = JSON.stringify(v));
  put('size', dir.size);
  for (const id of ids) put(`get ${id}`, dir.get(id));
  for (const id of ids) put(`tree ${id}`, dir.tree(id).sort());
  for (const org of ORGS) {
    for (const ref of REFS)
      for (const key of KEYS)
        put(
          `subscribers ${org} ${ref} ${key}`,
          dir
            .subscribers(org, ref, key)
            .map((s) => `${s.id}|${s.node}`)
            .sort(),
        );
    for (const flow of FLOWS) {
      put(`tasks ${org} ${flow}`, dir.tasks(org, flow));
      put(`counts ${org} ${flow}`, dir.counts(org, flow));
    }
    for (const [domain, action] of DOMAINS) put(`jobs ${org} ${domain} ${action}`, dir.jobs(org, domain, action));
    put(`list ${org}`, dir.list({ limit: 1e6, organization: org }));
  }
  put('list', dir.list({ limit: 1e6 }));
  for (let i = 0; i < ids.length; i += 7) put(`page after ${ids[i]}`, dir.list({ limit: 5, after: ids[i]! }));
  put('nextDue', dir.nextDue());
  for (const tier of TIERS) put(`withSearch ${tier}`, dir.withSearch([['tier', tier]]).sort());
  return out;
}

/** The entries compared one by one, so that a failure names the query that differs. */
function compare(t: Test, got: Record<string, string>, want: Record<string, string>): void {
  const differing = Object.keys(want).filter((k) => got[k] !== want[k]);
  t.same(differing.slice(0, 5), [], 'no query answers differently');
  for (const k of differing.slice(0, 3)) t.equal(got[k], want[k], k);
}

/** A new directory and segment space with the segments `listed` bulk-loaded into them. */
async function bulkLoaded(dir: string, listed: readonly number[]) {
  const directory = new ExecutionIndex(16);
  const space = new SegmentSpace();
  await loadSegmentsInto(dir, listed, space, directory);
  return { directory, space };
}

async function both(dir: string, listed: readonly number[]) {
  const { directory: bulk, space: bulkSpace } = await bulkLoaded(dir, listed);
  const each = new ExecutionIndex(16);
  const eachSpace = new SegmentSpace();
  await loadSegments(dir, listed, eachSpace, {
    locate: (id) => each.locationOf(id) ?? undefined,
    onEntry: (_id, location, summary) => each.put(summary, location),
    onRemoved: (id) => void each.remove(id),
  });
  return { bulk, bulkSpace, each, eachSpace };
}

for (const seed of [1, 2, 3]) {
  t.test(`seed ${seed}: the bulk load answers as puts and removes in order`, async (t) => {
    const dir = t.testdir();
    const { listed, ids } = await writeMix(dir, seed, 6);
    const { bulk, bulkSpace, each, eachSpace } = await both(dir, listed);
    t.ok(each.size > 100, 'the segments left executions');
    t.ok(ids.length > each.size, 'some ids were removed');
    compare(t, answers(bulk, ids), answers(each, ids));
    t.same(bulkSpace.list(), eachSpace.list(), 'the same bytes superseded in each segment');
    t.ok(
      eachSpace.list().some((s) => s.dead > 0),
      'entries were superseded',
    );
    // The due timers in due order, then both kept up alike after the load.
    for (const now of [3000, 9000, Infinity]) t.same(bulk.takeDue(now, 50), each.takeDue(now, 50), `takeDue ${now}`);
    const rnd = random(seed + 100);
    for (let i = 0; i < 40; i++) {
      const id = i % 4 === 0 ? ids[Math.floor(rnd() * ids.length)]! : randomId(rnd);
      if (i % 5 === 4) t.equal(bulk.remove(id), each.remove(id), `remove ${id}`);
      else {
        const summary = randomSummary(rnd, id, ids);
        bulk.put(summary, { segment: 9, offset: i, length: 10 });
        each.put(summary, { segment: 9, offset: i, length: 10 });
      }
    }
    compare(t, answers(bulk, ids), answers(each, ids));
    t.same(bulk.takeDue(Infinity), each.takeDue(Infinity), 'every due timer, in the same order');
  });
}

t.test('a second bulk load over a filled directory replaces and removes as puts do', async (t) => {
  const dir = t.testdir();
  const { listed, ids } = await writeMix(dir, 7, 5);
  const bulk = new ExecutionIndex(16);
  const space = new SegmentSpace();
  await loadSegmentsInto(dir, listed.slice(0, 2), space, bulk);
  t.ok(bulk.nextDue() !== null, 'the first load armed timers (and ordered them)');
  await loadSegmentsInto(dir, listed.slice(2), space, bulk);
  const { each } = await both(dir, listed);
  compare(t, answers(bulk, ids), answers(each, ids));
  t.same(bulk.takeDue(Infinity), each.takeDue(Infinity), 'every due timer, in the same order');
});

t.test("the load reserves what the snapshot counted live, else an estimate from the indexes' sizes", async (t) => {
  const dir = t.testdir();
  const { listed } = await writeMix(dir, 5, 4);
  const hinted = new ExecutionIndex(16);
  await loadSegmentsInto(dir, listed, new SegmentSpace(), hinted, 1000);
  t.equal(hinted.slotCapacity, 1000, 'room for what the snapshot counted, no more');
  const guessed = new ExecutionIndex(16);
  await loadSegmentsInto(dir, listed, new SegmentSpace(), guessed);
  t.ok(guessed.size > 100, 'the segments left executions');
  t.same(guessed.list({ limit: 1e6 }), hinted.list({ limit: 1e6 }), 'the same executions either way');
});

t.test('an index with text that is not ASCII loads as it was written', async (t) => {
  const dir = t.testdir();
  const summary: ExecutionSummary = {
    ...randomSummary(random(9), 'légacy-1', []),
    organization: 'zürich',
    correlationKey: 'ключ-😀',
    waits: [{ kind: 'event', node: 'n', eventType: 'message', nodeId: 'n', ref: 'bezahlt-ü', key: 'ключ-😀' }],
  };
  await writeSegment(dir, 1, [{ id: summary.id, json: '{}', summary }], []);
  const bulk = new ExecutionIndex(16);
  await loadSegmentsInto(dir, [1], new SegmentSpace(), bulk);
  t.same(bulk.get(summary.id)?.summary, summary, 'the summary, strings as written');
  t.same(
    bulk.subscribers('zürich', 'bezahlt-ü', 'ключ-😀'),
    [{ id: 'légacy-1', node: 'n', nodeId: 'n' }],
    'its subscription',
  );
});

/** The segments' bytes and dead bytes as `space` has them, for an image's header. */
function coveredOf(space: SegmentSpace, listed: readonly number[]) {
  return listed.map((n) => ({ segment: n, bytes: space.get(n)!.bytes, dead: space.get(n)!.dead }));
}

for (const seed of [11, 12]) {
  t.test(
    `seed ${seed}: a directory restored from its image, the later indexes on top, answers as one loaded`,
    async (t) => {
      const dir = t.testdir();
      const { listed, ids } = await writeMix(dir, seed, 6);
      const { directory: first, space: firstSpace } = await bulkLoaded(dir, listed.slice(0, 4));
      await writeImage(dir, takeImage(first, coveredOf(firstSpace, listed.slice(0, 4))));
      first.put(randomSummary(random(1), ids[0]!, []), { segment: 99, offset: 0, length: 1 }); // after the take: not in it

      const image = await readImage(dir, listed);
      if (!('directory' in image)) throw new Error(`no image: ${image.why}`);
      t.same(
        image.covered.map((c) => c.segment),
        listed.slice(0, 4),
      );
      const space = new SegmentSpace();
      for (const c of image.covered) space.add(c.segment, c.bytes, c.dead);
      await loadSegmentsInto(dir, listed.slice(4), space, image.directory);
      const { each, eachSpace } = await both(dir, listed);
      compare(t, answers(image.directory, ids), answers(each, ids));
      t.same(space.list(), eachSpace.list(), 'the same bytes superseded in each segment');
      // Restored columns grow and change as loaded ones do.
      const rnd = random(seed + 100);
      for (let i = 0; i < 300; i++) {
        const id = i % 4 === 0 ? ids[Math.floor(rnd() * ids.length)]! : randomId(rnd);
        if (i % 5 === 4) t.equal(image.directory.remove(id), each.remove(id), `remove ${id}`);
        else {
          const summary = randomSummary(rnd, id, ids);
          image.directory.put(summary, { segment: 9, offset: i, length: 10 });
          each.put(summary, { segment: 9, offset: i, length: 10 });
        }
      }
      compare(t, answers(image.directory, ids), answers(each, ids));
      t.same(image.directory.takeDue(Infinity), each.takeDue(Infinity), 'every due timer, in the same order');
    },
  );
}

t.test('an image is not used when it is damaged or its segments changed', async (t) => {
  const dir = t.testdir();
  const { listed } = await writeMix(dir, 21, 3);
  const { directory: d, space } = await bulkLoaded(dir, listed);
  const file = join(dir, IMAGE_NAME);
  const write = () => writeImage(dir, takeImage(d, coveredOf(space, listed)));
  const why = async (l = listed) => {
    const got = await readImage(dir, l);
    return 'why' in got ? got.why : 'used';
  };
  t.equal(await why(), 'none', 'no image yet');
  await write();
  t.equal(await why(), 'used');
  t.equal(await why([...listed, 9]), 'used', 'later segments are loaded on top');
  t.equal(await why([listed[1]!, listed[2]!]), 'other segments', 'a segment it covers is no longer listed first');
  t.equal(await why(listed.slice(0, 2)), 'other segments', 'it covers more than is listed');
  const bytes = await readFile(file);
  for (const at of [bytes.length - 3, Math.floor(bytes.length / 2)]) {
    const flipped = Buffer.from(bytes);
    flipped[at] = flipped[at]! ^ 0x40;
    await writeFile(file, flipped);
    t.equal(await why(), 'damaged: its checksum differs', `a byte changed at ${at}`);
  }
  await writeFile(file, bytes.subarray(0, bytes.length - 8));
  t.match(await why(), /^damaged: \d+ bytes, not \d+$/, 'cut short');
  await writeFile(file, bytes);
  await appendFile(join(dir, segmentName(listed[0]!)), 'x');
  t.match(await why(), /is not as it was/, 'a segment of another size');
});

t.test('an image larger than one read slice reads back whole, and damage in a later slice shows', async (t) => {
  const dir = t.testdir();
  const { listed } = await writeMix(dir, 31, 2);
  const { directory: d, space } = await bulkLoaded(dir, listed);
  // Enough entries that the image's larger columns span several of readImage's slices (256 KiB).
  const rnd = random(32);
  const ids: string[] = [];
  for (let i = 0; i < 40_000; i++) {
    const id = randomId(rnd);
    ids.push(id);
    d.put(randomSummary(rnd, id, ids.slice(-20)), { segment: listed[0]!, offset: i, length: 10 });
  }
  const image = takeImage(d, coveredOf(space, listed));
  t.ok(image.body.length > 4 * 256 * 1024, `an image of ${image.body.length} bytes`);
  await writeImage(dir, image);
  const got = await readImage(dir, listed);
  if (!('directory' in got)) throw new Error(`no image: ${got.why}`);
  const sample = ids.filter((_, i) => i % 97 === 0);
  compare(t, answers(got.directory, sample), answers(d, sample));
  const file = join(dir, IMAGE_NAME);
  const bytes = await readFile(file);
  const flipped = Buffer.from(bytes);
  const at = bytes.length - 300 * 1024;
  flipped[at] = flipped[at]! ^ 0x01;
  await writeFile(file, flipped);
  const damaged = await readImage(dir, listed);
  t.equal('why' in damaged ? damaged.why : 'used', 'damaged: its checksum differs', `a bit changed at ${at}`);
});

t.test('an image with empty columns (no keys, locks or trees) reads back', async (t) => {
  const dir = t.testdir();
  const summary: ExecutionSummary = { ...randomSummary(random(3), randomId(random(4)), []), root: null, parent: null };
  await writeSegment(dir, 1, [{ id: summary.id, json: '{}', summary: { ...summary, waits: [] } }], []);
  const { directory: d, space } = await bulkLoaded(dir, [1]);
  await writeImage(dir, takeImage(d, coveredOf(space, [1])));
  const image = await readImage(dir, [1]);
  if (!('directory' in image)) throw new Error(`no image: ${image.why}`);
  t.same(image.directory.get(summary.id), d.get(summary.id), 'the one execution, as loaded');
});
