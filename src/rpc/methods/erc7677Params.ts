import type { Address } from 'viem';
import { z } from 'zod';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { CommittedPaymaster } from '../../paymaster/parallelSigningCommitment.js';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import type { RpcContext } from '../rpcMethod.js';
import { assertUrlChainId, entryPointChain } from '../servedChain.js';
import { parseErc7677ParamsFast } from '../wire/erc7677.js';
import { modeObjectSchema } from '../wire/modeObject.js';
import { address, bytes, quantity } from '../wire/scalars.js';
import { partialUserOperationSchema } from '../wire/userOperation.js';

/**
 * EntryPoint v0.9's opt-ins in the ERC-7677 context (README, "Parallel signing on v0.9"): `signingPhase`, the
 * two-step flow of Candide's v0.9 paymaster (the account signs while Patron signs), and `validityUnit: "blocks"`,
 * a window in block numbers. Served on v0.9 only (erc7677V09Options.ts).
 */
const v09ContextSchema = z.object({
  signingPhase: z.enum(['commit', 'finalize'], { error: 'must be "commit" or "finalize"' }).optional(),
  validityUnit: z.enum(['seconds', 'blocks'], { error: 'must be "seconds" or "blocks"' }).optional(),
});

const contextSchema = z.intersection(modeObjectSchema, v09ContextSchema);
export type Erc7677Context = z.infer<typeof contextSchema>;

/** The op's v0.7+ paymaster fields, which a parallel-signing finalize sends back from its commit. */
const opPaymasterSchema = z.object({
  paymaster: address.optional(),
  paymasterData: bytes.optional(),
  paymasterVerificationGasLimit: quantity.optional(),
  paymasterPostOpGasLimit: quantity.optional(),
});

/**
 * The op with, only when the context is a finalize, the paymaster fields it carries (`committed`): every other
 * call ignores them, as it always did, and keeps the fast path's exact output.
 */
type Erc7677Op = PartialUserOperation & { readonly committed?: Partial<CommittedPaymaster> };

const withCommitted = (
  op: PartialUserOperation & z.infer<typeof opPaymasterSchema>,
  context: Erc7677Context | null | undefined,
): Erc7677Op => {
  const { paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit, ...rest } = op;
  if (context?.signingPhase !== 'finalize') return rest;
  const committed = { paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit };
  return {
    ...rest,
    committed: Object.fromEntries(Object.entries(committed).filter(([, v]) => v !== undefined)),
  };
};

const opSchema = z.intersection(partialUserOperationSchema, opPaymasterSchema);

/**
 * ERC-7677 params: `[userOp, entryPoint, chainId (hex), context]`; permissionless 0.1.x leaves the context
 * out when it is undefined. The context is the same mode object as the Biconomy dialect's, plus v0.9's opt-ins.
 */
export const erc7677Params = z
  .union([z.tuple([opSchema, address, quantity, contextSchema.nullable()]), z.tuple([opSchema, address, quantity])], {
    // A bad v0.9 opt-in in a well-formed call is named, not lost in the union's "must be" (the 4-tuple is first).
    error: (iss) => {
      const inner = iss.code === 'invalid_union' ? iss.errors[0]?.[0] : undefined;
      const [index, field] = inner?.path ?? [];
      return inner !== undefined && index === 3 && (field === 'signingPhase' || field === 'validityUnit')
        ? `params[3].${field}: ${inner.message}`
        : 'must be [userOperation, entryPoint, chainId, context?]';
    },
  })
  .transform((p): [Erc7677Op, Address, bigint, Erc7677Context | null] | [Erc7677Op, Address, bigint] =>
    p.length === 4 ? [withCommitted(p[0], p[3]), p[1], p[2], p[3]] : [withCommitted(p[0], undefined), p[1], p[2]],
  );

const V09_KEYS = ['signingPhase', 'validityUnit'] as const;

/**
 * The common shape by hand (the hot path of every v0.7+ client), else the schema: wire/erc7677.ts. A context
 * with v0.9's opt-ins is rare and goes to the schema, which reads them (and a finalize's paymaster fields).
 */
export const erc7677ParamsFast = (params: unknown): z.infer<typeof erc7677Params> | undefined => {
  if (Array.isArray(params)) {
    const context: unknown = params[3];
    if (typeof context === 'object' && context !== null && V09_KEYS.some((k) => Object.hasOwn(context, k))) {
      return undefined;
    }
  }
  return parseErc7677ParamsFast(params);
};

/**
 * The deployment of the EntryPoint the params name (any the URL's chain has), after checking that the chain id
 * they name is the URL's; and the context (an absent one is an empty mode object).
 */
export function erc7677Target(
  params: z.infer<typeof erc7677Params>,
  ctx: RpcContext,
): { chain: ChainRuntime; mode: Erc7677Context } {
  const [, entryPoint, chainId] = params;
  const chain = entryPointChain(ctx, entryPoint, 'params[1]');
  assertUrlChainId(ctx, chainId, 'params[2]');
  return { chain, mode: params[3] ?? modeObjectSchema.parse({}) };
}
