import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { TINY_GGUF, tinyGguf, tinyVocabulary, writeTinyGguf } from '../../helpers/tiny-gguf.js';

t.test('one seed, one file; another seed, other weights; a few hundred KB', async (t) => {
  const a = tinyGguf({ seed: 3 });
  t.ok(a.equals(tinyGguf({ seed: 3 })));
  t.notOk(a.equals(tinyGguf({ seed: 4 })));
  t.ok(a.byteLength > 100_000 && a.byteLength < 1_000_000, `${a.byteLength} bytes`);
  t.equal(a.subarray(0, 4).toString('latin1'), 'GGUF');
  t.equal(a.readUInt32LE(4), 3, 'GGUF v3');
});

t.test('node-llama-cpp reads its metadata, tokenizer and tensors', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-tiny-gguf-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'tiny.gguf');
  const size = writeTinyGguf(path, { seed: 1, name: 'check' });
  t.equal(readFileSync(path).byteLength, size);
  const info = await readGgufFileInfo(path);
  t.equal(info.version, 3);
  const meta = info.metadata as unknown as {
    general: { architecture: string; name: string };
    llama: Record<string, unknown>;
    tokenizer: { ggml: { model: string; tokens: string[]; bos_token_id: number; eos_token_id: number } };
  };
  t.equal(meta.general.architecture, 'llama');
  t.equal(meta.general.name, 'check');
  t.equal(meta.llama.context_length, TINY_GGUF.contextLength);
  t.equal(meta.llama.block_count, TINY_GGUF.blocks);
  t.equal(meta.tokenizer.ggml.model, 'llama');
  const vocab = tinyVocabulary();
  t.same(meta.tokenizer.ggml.tokens, vocab.tokens);
  t.equal(meta.tokenizer.ggml.tokens[meta.tokenizer.ggml.bos_token_id], '<s>');
  t.equal(meta.tokenizer.ggml.tokens[meta.tokenizer.ggml.eos_token_id], '</s>');
  const names = (info.fullTensorInfo ?? []).map((x) => x.name);
  t.equal(names.length, 3 + 9 * TINY_GGUF.blocks);
  for (const n of ['token_embd.weight', 'output_norm.weight', 'output.weight', 'blk.1.ffn_down.weight'])
    t.ok(names.includes(n), n);
});

t.test('the vocabulary has every byte and every printable ASCII character', async (t) => {
  const { tokens } = tinyVocabulary();
  t.equal(new Set(tokens).size, tokens.length, 'no duplicates');
  for (let b = 0; b < 256; b++) t.ok(tokens.includes(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`));
  for (const c of '{}[]":,0123456789abcxyzABC-_.') t.ok(tokens.includes(c), c);
});
