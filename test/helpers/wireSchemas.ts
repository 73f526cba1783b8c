import { z } from 'zod';

/**
 * What clients may rely on in the admin API's and the CLI's JSON, written out independently of the source's
 * own view schemas, so a change of the wire format fails the tests instead of silently passing them.
 */
export const isoDate = z.iso.datetime();

export const accountWire = z.strictObject({ accountId: z.uuid(), email: z.string(), createdAt: isoDate });

export const tokenWire = z.strictObject({
  tokenId: z.uuid(),
  name: z.string(),
  prefix: z.string().length(12),
  createdAt: isoDate,
  lastUsedAt: isoDate.nullable(),
  revokedAt: isoDate.nullable(),
});

export const createdTokenWire = tokenWire.extend({ authToken: z.string().regex(/^pat\.[0-9A-Za-z]{43}$/) });

export const dappWire = z.strictObject({
  dappId: z.uuid(),
  name: z.string(),
  chainIds: z.array(z.number().int().positive()),
  apiKey: z.string().regex(/^pk\.[0-9A-Za-z]{33}$/),
  createdAt: isoDate,
  updatedAt: isoDate,
});
