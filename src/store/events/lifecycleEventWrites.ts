import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Trx } from '../ledger/ledgerRows.js';
import { appendLifecycleEvents, type NewLifecycleEvent } from './lifecycleEventRepository.js';

/**
 * Lifecycle events written by the spend ledger inside its own transactions (the outbox pattern: the event commits
 * with the change it reports, or neither does). `sponsorship.expired` is the release of a reservation whose signed
 * window the chain passed unincluded; it goes to every dApp a `sponsorship.signed` event of that reservation was
 * written for (its `ref`), under the same op key, so it follows the signature's event in order.
 */

/** The fields of the `sponsorship.signed` body the expiry repeats (lifecycleEvents/lifecycleEventEmitters.ts). */
const signedData = z.object({
  chainId: z.number(),
  entryPoint: z.string(),
  paymaster: z.string(),
  sender: z.string(),
  nonce: z.string(),
  userOpHash: z.string(),
  validUntil: z.number(),
  reserved: z.array(z.object({ unit: z.string(), amount: z.string() })),
});
const signedBody = z.object({ data: signedData });

export async function writeExpiredEvents(
  trx: Trx,
  args: {
    readonly reservationId: string;
    readonly now: number;
    /**
     * Why nothing of it can be included any more: the chain passed the signed window ('window'), or the op key's
     * nonce was used by another op ('nonceUsed': another dApp's signature, another paymaster, or none).
     */
    readonly reason?: 'window' | 'nonceUsed';
  },
): Promise<void> {
  const signed = await trx
    .selectFrom('lifecycle_events')
    .select(['dapp_id', 'op_key', 'payload'])
    .where('ref', '=', args.reservationId)
    .where('type', '=', 'sponsorship.signed')
    .orderBy('seq')
    .execute();
  if (signed.length === 0) return;
  // The op signed again (a larger worst case) has several signed events: its latest one per dApp says it best.
  const latest = new Map<string, (typeof signed)[number]>();
  for (const s of signed) latest.set(s.dapp_id, s);
  const rows: NewLifecycleEvent[] = [];
  for (const s of latest.values()) {
    const parsed = signedBody.safeParse(JSON.parse(s.payload));
    if (!parsed.success) continue;
    const d = parsed.data.data;
    const type = 'sponsorship.expired';
    rows.push({
      id: `evt_${randomUUID()}`,
      dappId: s.dapp_id,
      type,
      opKey: s.op_key,
      payload: JSON.stringify({
        type,
        timestamp: new Date(args.now).toISOString(),
        data: {
          chainId: d.chainId,
          entryPoint: d.entryPoint,
          paymaster: d.paymaster,
          sender: d.sender,
          nonce: d.nonce,
          userOpHash: d.userOpHash,
          validUntil: d.validUntil,
          reservationId: args.reservationId,
          reason: args.reason ?? 'window',
          released: d.reserved,
        },
      }),
      createdAt: args.now,
      dedupeKey: `${type}:${s.dapp_id}:${args.reservationId}`,
    });
  }
  await appendLifecycleEvents(trx, rows);
}
