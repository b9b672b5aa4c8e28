/**
 * A real model for tests, written on the spot: a tiny llama-architecture GGUF with seeded random
 * weights. node-llama-cpp loads and runs it like any model: its words are nonsense, but its
 * protocol is real (tokenizer, sampling, grammar-constrained JSON, determinism per seed, token
 * counts). No package ships a small LLM, and a downloaded one would make the tests need a network.
 *
 * The file follows the GGUF v3 layout (llama.cpp's gguf.c): header, metadata, tensor infos,
 * padding to the alignment, then the F32 tensor data, each tensor aligned.
 */
import { writeFileSync } from 'node:fs';
import { prng } from './prng.js';

/** The shape of the tiny model: small enough to write in milliseconds and run a token in microseconds. */
export const TINY_GGUF = {
  contextLength: 512,
  embedding: 64,
  blocks: 2,
  feedForward: 128,
  heads: 4,
  headsKv: 2,
  rmsEpsilon: 1e-5,
  bosId: 1,
  eosId: 2,
} as const;

export interface TinyGgufOptions {
  /** Seeds the weights: one seed, one model (same bytes every time). Default 1. */
  readonly seed?: number;
  /** general.name (default `tiny-random-llama`). */
  readonly name?: string;
  /** How strongly the model leans to end its answer: the default ends most answers within a few dozen tokens; 0 almost never ends (a model that rambles to maxTokens). */
  readonly eosBias?: number;
  /** The context length the model declares (default TINY_GGUF.contextLength): room for longer conversations. */
  readonly contextLength?: number;
}

const GGUF_MAGIC = 0x46554747; // "GGUF" read little-endian
const GGUF_VERSION = 3;
const ALIGNMENT = 32;
const enum ValueType {
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
}
const GGML_TYPE_F32 = 0;
/** The constant in dimension 0 of every token embedding (see tinyGguf). */
const EOS_CARRIER = 4;
/** The weight </s> gives dimension 0 by default. */
const EOS_BIAS = 0.8;
const enum TokenType {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  Byte = 6,
}

type MetaValue =
  | { type: ValueType.Uint32 | ValueType.Int32 | ValueType.Float32; value: number }
  | { type: ValueType.Bool; value: boolean }
  | { type: ValueType.String; value: string }
  | { type: ValueType.Array; of: ValueType.String; value: readonly string[] }
  | { type: ValueType.Array; of: ValueType.Float32 | ValueType.Int32; value: readonly number[] };

/** Printable pieces beyond single characters: a few words, so text tokenizes into more than bytes. */
const WORDS = ['the', 'and', 'yes', 'no', 'ok', 'true', 'false', 'null', 'name', 'label', 'value', 'hello', 'world'];

/**
 * The SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte-fallback tokens (any text
 * tokenizes), every printable ASCII character and `▁` (space) as a piece, and a few words with
 * and without a leading space. Pure.
 */
export function tinyVocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TokenType.Unknown, TokenType.Control, TokenType.Control];
  const scores = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TokenType.Byte);
    scores.push(0);
  }
  const pieces = ['▁'];
  for (let c = 0x21; c <= 0x7e; c++) pieces.push(String.fromCharCode(c));
  for (const w of WORDS) pieces.push(w, `▁${w}`);
  for (const p of pieces) {
    tokens.push(p);
    types.push(TokenType.Normal);
    // Longer pieces win a merge: SentencePiece merges the highest-scoring pair first.
    scores.push(-100 + [...p].length);
  }
  return { tokens, scores, types };
}

interface Tensor {
  readonly name: string;
  /** GGUF order: dims[0] is the innermost (a row's length). */
  readonly dims: readonly number[];
  readonly data: Float32Array;
}

/**
 * Writes the tiny model to `path` and returns its size in bytes. The same seed writes the same
 * bytes. Synchronous; throws on a file system error.
 */
export function writeTinyGguf(path: string, options: TinyGgufOptions = {}): number {
  const bytes = tinyGguf(options);
  writeFileSync(path, bytes);
  return bytes.byteLength;
}

/** The tiny model's bytes (see writeTinyGguf). Pure. */
export function tinyGguf(options: TinyGgufOptions = {}): Buffer {
  const m = TINY_GGUF;
  const vocab = tinyVocabulary();
  const nVocab = vocab.tokens.length;
  const headDim = m.embedding / m.heads;
  const kvDim = headDim * m.headsKv;
  const random = prng(options.seed ?? 1);

  const tensors: Tensor[] = [];
  const weights = (name: string, dims: number[], scale: number): void => {
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = (random() * 2 - 1) * scale;
    tensors.push({ name, dims, data });
  };
  const ones = (name: string, n: number): void => {
    tensors.push({ name, dims: [n], data: new Float32Array(n).fill(1) });
  };
  const inScale = 1 / Math.sqrt(m.embedding);
  weights('token_embd.weight', [m.embedding, nVocab], 1);
  // Dimension 0 of every embedding is a constant the residual stream carries to the output, where
  // only </s> reads it: random weights alone would almost never end an answer.
  const embd = tensors[0]!.data;
  for (let tok = 0; tok < nVocab; tok++) embd[tok * m.embedding] = EOS_CARRIER;
  for (let b = 0; b < m.blocks; b++) {
    ones(`blk.${b}.attn_norm.weight`, m.embedding);
    weights(`blk.${b}.attn_q.weight`, [m.embedding, m.embedding], inScale);
    weights(`blk.${b}.attn_k.weight`, [m.embedding, kvDim], inScale);
    weights(`blk.${b}.attn_v.weight`, [m.embedding, kvDim], inScale);
    weights(`blk.${b}.attn_output.weight`, [m.embedding, m.embedding], inScale);
    ones(`blk.${b}.ffn_norm.weight`, m.embedding);
    weights(`blk.${b}.ffn_gate.weight`, [m.embedding, m.feedForward], inScale);
    weights(`blk.${b}.ffn_up.weight`, [m.embedding, m.feedForward], inScale);
    weights(`blk.${b}.ffn_down.weight`, [m.feedForward, m.embedding], 1 / Math.sqrt(m.feedForward));
  }
  ones('output_norm.weight', m.embedding);
  weights('output.weight', [m.embedding, nVocab], inScale * 4);
  const output = tensors[tensors.length - 1]!.data;
  for (let tok = 0; tok < nVocab; tok++)
    output[tok * m.embedding] = tok === m.eosId ? (options.eosBias ?? EOS_BIAS) : 0;

  const meta: [string, MetaValue][] = [
    ['general.architecture', { type: ValueType.String, value: 'llama' }],
    ['general.name', { type: ValueType.String, value: options.name ?? 'tiny-random-llama' }],
    ['general.alignment', { type: ValueType.Uint32, value: ALIGNMENT }],
    ['general.file_type', { type: ValueType.Uint32, value: 0 }], // all F32
    ['llama.context_length', { type: ValueType.Uint32, value: options.contextLength ?? m.contextLength }],
    ['llama.embedding_length', { type: ValueType.Uint32, value: m.embedding }],
    ['llama.block_count', { type: ValueType.Uint32, value: m.blocks }],
    ['llama.feed_forward_length', { type: ValueType.Uint32, value: m.feedForward }],
    ['llama.attention.head_count', { type: ValueType.Uint32, value: m.heads }],
    ['llama.attention.head_count_kv', { type: ValueType.Uint32, value: m.headsKv }],
    ['llama.rope.dimension_count', { type: ValueType.Uint32, value: headDim }],
    ['llama.attention.layer_norm_rms_epsilon', { type: ValueType.Float32, value: m.rmsEpsilon }],
    ['llama.vocab_size', { type: ValueType.Uint32, value: nVocab }],
    ['tokenizer.ggml.model', { type: ValueType.String, value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: ValueType.Array, of: ValueType.String, value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: ValueType.Array, of: ValueType.Float32, value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: ValueType.Array, of: ValueType.Int32, value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: ValueType.Uint32, value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: ValueType.Uint32, value: m.bosId }],
    ['tokenizer.ggml.eos_token_id', { type: ValueType.Uint32, value: m.eosId }],
    ['tokenizer.ggml.add_bos_token', { type: ValueType.Bool, value: true }],
    ['tokenizer.ggml.add_eos_token', { type: ValueType.Bool, value: false }],
  ];

  const out = new Writer();
  out.u32(GGUF_MAGIC);
  out.u32(GGUF_VERSION);
  out.u64(tensors.length);
  out.u64(meta.length);
  for (const [key, value] of meta) {
    out.string(key);
    out.value(value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    out.string(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    offsets.push(offset);
    offset = align(offset + t.data.byteLength);
  }
  out.pad();
  const dataStart = out.length;
  const buffer = Buffer.alloc(dataStart + offset);
  out.copyTo(buffer);
  tensors.forEach((t, i) => {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(buffer, dataStart + offsets[i]!);
  });
  return buffer;
}

function align(n: number): number {
  return Math.ceil(n / ALIGNMENT) * ALIGNMENT;
}

/** Little-endian GGUF primitives into growing chunks. */
class Writer {
  private readonly chunks: Buffer[] = [];
  length = 0;

  private push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.byteLength;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.byteLength);
    this.push(bytes);
  }
  value(v: MetaValue): void {
    this.u32(v.type);
    switch (v.type) {
      case ValueType.Uint32:
        return this.u32(v.value);
      case ValueType.Int32:
        return this.i32(v.value);
      case ValueType.Float32:
        return this.f32(v.value);
      case ValueType.Bool:
        return this.push(Buffer.from([v.value ? 1 : 0]));
      case ValueType.String:
        return this.string(v.value);
      case ValueType.Array:
        this.u32(v.of);
        this.u64(v.value.length);
        if (v.of === ValueType.String) for (const s of v.value) this.string(s);
        else if (v.of === ValueType.Float32) for (const n of v.value) this.f32(n);
        else for (const n of v.value) this.i32(n);
        return;
    }
  }
  pad(): void {
    const rest = align(this.length) - this.length;
    if (rest > 0) this.push(Buffer.alloc(rest));
  }
  copyTo(target: Buffer): void {
    let at = 0;
    for (const c of this.chunks) {
      c.copy(target, at);
      at += c.byteLength;
    }
  }
}
