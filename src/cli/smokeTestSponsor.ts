import type { Address, Hex } from 'viem';
import { toHex } from 'viem';
import { formatUserOperationRequest, type UserOperation } from 'viem/account-abstraction';
import { z } from 'zod';
import { ValidationError } from '../errors/PatronError.js';
import { type ChainFacts, explainFailure, jsonRpc } from './smokeTestChecks.js';

/**
 * The smoke test's ERC-7677 calls to the Patron under test (https://eips.ethereum.org/EIPS/eip-7677): one
 * `pm_getPaymasterStubData` or `pm_getPaymasterData` on the dApp's paymaster URL, its answer parsed and put
 * into the op, a refusal named with what to check.
 */

const quantity = z
  .string()
  .regex(/^0x[0-9a-fA-F]+$/)
  .transform((v) => BigInt(v));
const bytes = z.string().regex(/^0x([0-9a-fA-F]{2})*$/) as unknown as z.ZodType<Hex>;
/** ERC-7677's answer (v0.6: paymasterAndData; v0.7+: the paymaster's four fields), with computed limits if asked. */
const paymasterAnswer = z.object({
  paymasterAndData: bytes.optional(),
  paymaster: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .optional(),
  paymasterData: bytes.optional(),
  paymasterVerificationGasLimit: quantity.optional(),
  paymasterPostOpGasLimit: quantity.optional(),
  callGasLimit: quantity.optional(),
  verificationGasLimit: quantity.optional(),
  preVerificationGas: quantity.optional(),
});
export type PaymasterAnswer = z.infer<typeof paymasterAnswer>;

/** Asks the Patron for the op's paymaster fields; any JSON-RPC error or malformed answer fails, named. */
export async function askPaymaster(args: {
  baseUrl: string;
  apiKey: string;
  chainId: number;
  entryPoint: Address;
  method: 'pm_getPaymasterStubData' | 'pm_getPaymasterData';
  op: UserOperation;
  context: Record<string, unknown>;
  facts: ChainFacts;
}): Promise<PaymasterAnswer> {
  const answer = await jsonRpc({
    url: `${args.baseUrl}/api/v1/${args.chainId}/${args.apiKey}`,
    method: args.method,
    params: [formatUserOperationRequest(args.op), args.entryPoint, toHex(args.chainId), args.context],
    what: `the Patron at ${args.baseUrl}`,
  });
  const parsed = paymasterAnswer.safeParse(answer.result);
  if (answer.error !== undefined || !parsed.success) {
    throw new ValidationError(`${args.method} refused: ${patronRefusal({ error: answer.error, facts: args.facts })}`);
  }
  return parsed.data;
}

/** The op with the answer's paymaster fields, and the gas limits the answer computed. */
export function withPaymaster({ op, answer: a }: { op: UserOperation; answer: PaymasterAnswer }): UserOperation {
  const limits = {
    ...(a.callGasLimit === undefined ? {} : { callGasLimit: a.callGasLimit }),
    ...(a.verificationGasLimit === undefined ? {} : { verificationGasLimit: a.verificationGasLimit }),
    ...(a.preVerificationGas === undefined ? {} : { preVerificationGas: a.preVerificationGas }),
  };
  if (a.paymasterAndData !== undefined) {
    return { ...(op as UserOperation<'0.6'>), ...limits, paymasterAndData: a.paymasterAndData };
  }
  return {
    ...op,
    ...limits,
    ...(a.paymaster === undefined ? {} : { paymaster: a.paymaster as Address }),
    ...(a.paymasterData === undefined ? {} : { paymasterData: a.paymasterData }),
    ...(a.paymasterVerificationGasLimit === undefined
      ? {}
      : { paymasterVerificationGasLimit: a.paymasterVerificationGasLimit }),
    ...(a.paymasterPostOpGasLimit === undefined ? {} : { paymasterPostOpGasLimit: a.paymasterPostOpGasLimit }),
  } as UserOperation;
}

export function describePaymaster(a: PaymasterAnswer): string {
  if (a.paymasterAndData !== undefined) return `paymasterAndData ${a.paymasterAndData}`;
  return `paymaster ${a.paymaster ?? '?'}, paymasterData ${a.paymasterData ?? '?'}, paymasterVerificationGasLimit ${a.paymasterVerificationGasLimit ?? '?'}, paymasterPostOpGasLimit ${a.paymasterPostOpGasLimit ?? '?'}`;
}

/** What to check for Patron's usual refusals (its JSON-RPC codes, src/rpc/rpcErrors.ts). */
const HINTS: Readonly<Record<number, string>> = {
  [-32001]: "check --api-key, the dApp's key in its paymaster URL",
  [-32002]: 'check --chain and that the dApp serves it',
  [-32005]: 'rate limited: try again later',
  [-32010]: "the dApp's webhook denied it: pass --webhook-data if it expects some",
  [-32011]: "the dApp's webhook did not answer",
  [-32012]: "a sponsorship policy of the dApp denied it: this op deploys a SimpleAccount and calls its owner's address",
  [-32042]: "the paymaster's deposit is too low for Patron to sign: top it up with `patron paymaster deposit`",
  [-32043]:
    "the paymaster no longer accepts Patron's signing key: its owner adds it (`patron paymaster add-signer`), or the instances move to a key it accepts (docs/guides/signer-rotation.md)",
};

function patronRefusal(args: { error: { code: number; message: string } | undefined; facts: ChainFacts }): string {
  if (args.error === undefined) return 'an answer without paymaster fields';
  const { code, message } = args.error;
  const text = `error ${code}: ${explainFailure({ message, facts: args.facts })}`;
  const hint = HINTS[code];
  return hint === undefined ? text : `${text} (${hint})`;
}
