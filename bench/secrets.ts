/**
 * What sealing stored secrets costs (docs/decisions/048-secrets-at-rest.md): opening one sealed
 * value (each webhook delivery opens its endpoint's secrets) beside the HMAC of a delivery it
 * precedes, sealing one, and a start converting a directory's plain secrets (reseal records and a
 * checkpoint). Run: `npm run build && node dist/bench/secrets.js`.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keySourceOf, openSecrets } from '../src/daemon/secrets/open-secrets.js';
import { SecretBox } from '../src/daemon/secrets/secret-box.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { Store } from '../src/daemon/store/store.js';
import { machineLine } from './report.js';

/** Nanoseconds per call of `fn`, over `n` calls after a warm-up. */
function perCall(n: number, fn: () => unknown): number {
  for (let i = 0; i < n / 10; i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - start) / n;
}

/** A start converting `n` provider keys stored in plain text: milliseconds, checkpoint included. */
async function conversion(n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'wfx-bench-secrets-'));
  try {
    const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
    const at = new Date().toISOString();
    for (let i = 0; i < n; i += 500) {
      const records: WfxRecord[] = [];
      for (let j = i; j < Math.min(n, i + 500); j++)
        records.push({
          type: 'aiProvider.saved',
          provider: {
            providerId: `p-${j}`,
            name: `p${j}`,
            organization: 'default',
            kind: 'openai-compatible',
            baseUrl: 'http://127.0.0.1:9/v1',
            model: 'm',
            apiKey: `sk-${j}-${'x'.repeat(40)}`,
            isDefault: false,
            createdAt: at,
            updatedAt: at,
          },
        });
      await store.commit(...records);
    }
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const started = performance.now();
    await openSecrets({ source: await keySourceOf(undefined, dir), store, directory: true, logger: quiet });
    const ms = performance.now() - started;
    await store.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const box = SecretBox.ephemeral();
const context = JSON.stringify(['webhook.secret', 'default', 'w-1', 'ALL']);
const secret = `whsec_${'x'.repeat(32)}`;
const sealed = box.seal(secret, context);
const body = Buffer.alloc(2048, 1);
console.log(machineLine());
console.log(`open one sealed secret: ${(perCall(200_000, () => box.open(sealed, context)) / 1000).toFixed(1)} µs`);
console.log(`seal one secret: ${(perCall(200_000, () => box.seal(secret, context)) / 1000).toFixed(1)} µs`);
console.log(
  `HMAC-SHA256 of a 2 KiB delivery: ${(perCall(200_000, () => createHmac('sha256', secret).update(body).digest()) / 1000).toFixed(1)} µs`,
);
for (const n of [1_000, 10_000])
  console.log(`a start converting ${n} plain secrets (and checkpointing): ${(await conversion(n)).toFixed(0)} ms`);
