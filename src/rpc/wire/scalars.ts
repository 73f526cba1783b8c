import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { toAddress } from '../../crypto/address.js';

/**
 * The scalars of the paymaster wire in every encoding real clients send (../shared/notes/clients.md): quantities
 * as hex ("0x00" included), decimal strings or numbers; mixed-case hex. Parsed into bigints, checksummed
 * addresses and lower-case bytes. Each comes as a zod schema (which names what is wrong) and as a reader for the
 * hand-written fast parsers (userOperation.ts, modeObject.ts, erc7677.ts), which returns NOT_SURE where the
 * schema must decide.
 */
const MAX_UINT256 = 2n ** 256n - 1n;
const HEX_QUANTITY = /^0x[0-9a-fA-F]{0,64}$/;
const DECIMAL_QUANTITY = /^\d{1,78}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES = /^0x([0-9a-fA-F]{2})*$/;
/** BYTES for the fast path: the same language (0x, hex digits, an even count) without a repeated group. */
const HEX_DIGITS = /^0x[0-9a-fA-F]*$/;

/** The uint256 a quantity (string or number) stands for, or undefined when it is not one. */
function quantityValue(v: string | number): bigint | undefined {
  const text = typeof v === 'number' ? (Number.isSafeInteger(v) && v >= 0 ? String(v) : '') : v.trim();
  const ok = HEX_QUANTITY.test(text) || DECIMAL_QUANTITY.test(text);
  const n = ok ? BigInt(text === '0x' ? 0 : text) : -1n;
  return n < 0n || n > MAX_UINT256 ? undefined : n;
}

const toBytes = (v: string): Hex => v.toLowerCase() as Hex;

export const quantity = z
  .union([z.string(), z.number()], { error: 'must be a hex or decimal quantity' })
  .transform((v, ctx) => {
    const n = quantityValue(v);
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be a hex or decimal quantity (uint256)' });
      return z.NEVER;
    }
    return n;
  });

export const address = z
  .string({ error: 'must be an address' })
  .regex(ADDRESS, { error: 'must be a 20-byte hex address' })
  .transform(toAddress);

export const bytes = z
  .string({ error: 'must be a hex string' })
  .regex(BYTES, { error: 'must be 0x-prefixed hex with an even number of digits' })
  .transform(toBytes);

/** A quantity as the hex answers write it (ERC-7677, Pimlico's dialect): 0x and no leading zeros. */
export const hexQuantity = (n: bigint): Hex => `0x${n.toString(16)}`;

/*
 * The fast path. Every sponsorship request parses its params; through zod that is tens of µs of the ~200 µs a
 * request may cost, so the common shape (what every SDK sends) is checked by hand first. The contract: a fast
 * parser either returns exactly what the schema would return for the same input, or undefined ("not sure"), and
 * the caller then runs the schema, which produces the value or the error message. So it only accepts a subset of
 * what the schema accepts (plain objects and the field types the schema allows, nothing else), builds its result
 * with the schema's own transforms, and leaves every refusal to the schema. A test pins the two to each other
 * (userOperation.test.ts).
 */

/** An object as JSON.parse makes it; zod's object and record checks accept every such value. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    Object.getPrototypeOf(v) === Object.prototype &&
    !Object.hasOwn(v, 'constructor')
  );
}

/** Field readers: the parsed value, NOT_SURE when the schema must decide; `undefined` input means absent. */
export const NOT_SURE = Symbol('not sure');
export type Read<T> = T | typeof NOT_SURE;

export function readQuantity(v: unknown): Read<bigint> {
  if (typeof v !== 'string' && typeof v !== 'number') return NOT_SURE;
  return quantityValue(v) ?? NOT_SURE;
}
export function readAddress(v: unknown): Read<Address> {
  return typeof v === 'string' && ADDRESS.test(v) ? toAddress(v) : NOT_SURE;
}
export function readOptionalAddress(v: unknown): Read<Address | undefined> {
  return v === undefined ? undefined : readAddress(v);
}
export function readBytes(v: unknown): Read<Hex> {
  return typeof v === 'string' && v.length % 2 === 0 && HEX_DIGITS.test(v) ? toBytes(v) : NOT_SURE;
}
export function readOptionalBytes(v: unknown): Read<Hex | undefined> {
  return v === undefined ? undefined : readBytes(v);
}
