import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { RotateSecretsBody, type SecretsKeyReport, type SecretsRotated } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { keyUsage, resealStored, settleReseal } from '../../secrets/open-secrets.js';
import { crashPoint } from '../../store/crash-point.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { WfxRecord } from '../../state/records.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Caller } from '../caller.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

export interface SecretsRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  readonly secrets: SecretBox;
  readonly now?: () => Date;
}

/** Reseal passes a rotation makes at most: a secret sealed with the old key while one ran is caught by the next. */
const RESEAL_PASSES = 3;

/** The report of `secrets` over `state`. */
function report(state: WfxState, secrets: SecretBox): SecretsKeyReport {
  const usage = keyUsage(state);
  const ids = [...new Set([...secrets.keyIds(), ...usage.byKey.keys()])];
  return {
    keyId: secrets.sealingKeyId,
    where: secrets.where,
    writable: secrets.writable,
    keys: ids.map((keyId) => ({ keyId, held: secrets.has(keyId), secrets: usage.byKey.get(keyId) ?? 0 })),
    plain: usage.plain,
  };
}

function systemOnly(caller: Caller): void {
  if (!caller.system) throw new WfxError('FORBIDDEN', "only a system admin manages the daemon's secrets keys");
}

/**
 * GET /admin/secrets and POST /admin/secrets/rotate: the keys that encrypt stored secrets (ids
 * and where they are kept, never a key), and a rotation: every stored secret sealed again, in
 * journal records, with a new key, then a checkpoint so that no journal segment or snapshot
 * keeps the old ciphertexts. A crash part way leaves the new key current in the state; the next
 * start seals the rest. System admins only (an organization's admin gets 403 FORBIDDEN).
 */
export function secretsRoutes(fastify: FastifyInstance, deps: SecretsRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue, secrets } = deps;
  const now = deps.now ?? (() => new Date());
  const config = { auth: { permission: 'ADMIN' as const } };
  /** One rotation at a time. */
  let rotating: Promise<unknown> = Promise.resolve();

  app.get('/admin/secrets', {
    config,
    schema: { tags: ['admin'], summary: 'The keys that encrypt stored secrets: ids, where kept, what each seals' },
    handler: async (request): Promise<SecretsKeyReport> => {
      systemOnly(request.caller!);
      secrets.reload(); // a key an operator just added shows
      return report(store.state, secrets);
    },
  });

  app.post('/admin/secrets/rotate', {
    config,
    schema: {
      tags: ['admin'],
      summary: 'Seal every stored secret with a new key (added to the key file, or keyId: one there already)',
      body: RotateSecretsBody,
    },
    handler: async (request): Promise<SecretsRotated> => {
      systemOnly(request.caller!);
      const run = rotating.then(async (): Promise<SecretsRotated> => {
        const keyId = request.body.keyId;
        if (keyId === undefined && !secrets.writable)
          throw new WfxError(
            'VALIDATION_ERROR',
            `the keys come from ${secrets.where}, where the daemon cannot add one: add a key there, restart, and give its keyId`,
          );
        const id = keyId ?? (await secrets.addKey(now()));
        secrets.useKey(id);
        // The new key is current before anything is sealed with it: a crash from here on
        // leaves the rest to the next start's reseal.
        await catalogue.pinSecretsKey();
        crashPoint('secrets:pinned');
        let resealed = 0;
        let unreadable = 0;
        for (let pass = 0; pass < RESEAL_PASSES; pass++) {
          const done = await resealStored(store, secrets, request.log);
          resealed += done.plain + done.resealed;
          unreadable = done.unreadable;
          if (done.plain + done.resealed === 0) break;
        }
        await settleReseal(store);
        request.log.info({ keyId: id, resealed, unreadable }, 'secrets: rotated to a new key');
        return { ...report(store.state, secrets), added: keyId === undefined, resealed, unreadable };
      });
      rotating = run.catch(() => undefined);
      return run;
    },
  });
}
