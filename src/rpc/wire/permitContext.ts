import { type Hex, isErc6492Signature, parseErc6492Signature, size } from 'viem';
import { z } from 'zod';
import { MAX_PERMIT_SIGNATURE_LENGTH, type TokenPermit } from '../../paymaster/entryPoints/paymasterModes.js';
import type { PermitRequest } from '../../paymaster/token/tokenPermit.js';
import { bytes, quantity } from './scalars.js';

/*
 * The token mode's permit on the wire (docs/reference/json-rpc.md, "The permit"): the ERC-7677 context's `permit`,
 * which carries the account's signed EIP-2612 permit to pm_getPaymasterData, and the stub's `permitTypedData`,
 * which tells the client what to sign.
 */

/**
 * The most a permit signature may weigh as sent: an undeployed account's SDK wraps it in ERC-6492, with its
 * factory's call (a Safe's setup: about 600 bytes), which Patron removes (the paymaster validates once the
 * initCode has run, and then asks the account itself).
 */
export const MAX_WIRE_PERMIT_SIGNATURE_LENGTH = 8192;

/**
 * `{ value, signature }`: the allowance the permit sets (a hex or decimal uint256, what the typed data's message
 * said) and the account's signature of it (its ERC-6492 wrapper, if any, removed here; at most 2,048 bytes then).
 */
export const permitContextSchema = z
  .object(
    {
      value: quantity,
      signature: bytes.refine((s) => size(s) <= MAX_WIRE_PERMIT_SIGNATURE_LENGTH, {
        error: `must be at most ${MAX_WIRE_PERMIT_SIGNATURE_LENGTH} bytes`,
      }),
    },
    { error: 'must be an object { value, signature } (the signed permitTypedData of pm_getPaymasterStubData)' },
  )
  .transform((p, ctx): TokenPermit => {
    const signature = innerSignature(p.signature);
    if (signature === undefined) {
      ctx.addIssue({ code: 'custom', message: 'is an ERC-6492 signature that does not decode', path: ['signature'] });
      return z.NEVER;
    }
    if (size(signature) > MAX_PERMIT_SIGNATURE_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at most ${MAX_PERMIT_SIGNATURE_LENGTH} bytes (without an ERC-6492 wrapper)`,
        path: ['signature'],
      });
      return z.NEVER;
    }
    return { value: p.value, signature };
  });

/**
 * The signature the account's code checks: ERC-6492's inner signature when wrapped (`abi.encode(factory,
 * factoryData, signature) ‖ 0x6492…6492`, what viem's smart accounts sign while undeployed), the signature itself
 * otherwise; undefined for a wrapper that does not decode.
 */
function innerSignature(signature: Hex): Hex | undefined {
  if (!isErc6492Signature(signature)) return signature;
  try {
    return parseErc6492Signature(signature).signature;
  } catch {
    return undefined;
  }
}

/**
 * The stub's `permitTypedData`: EIP-712 typed data as eth_signTypedData_v4 and viem's signTypedData take it, the
 * uint256 values as decimal strings (exact in JSON; viem, ethers and wallets read them).
 */
export function permitTypedDataField(p: PermitRequest) {
  return {
    domain: { name: p.name, version: p.version, chainId: p.chainId, verifyingContract: p.token },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: {
      owner: p.owner,
      spender: p.spender,
      value: p.value.toString(),
      nonce: p.nonce.toString(),
      deadline: p.deadline.toString(),
    },
  };
}
