import type { Address } from 'viem';
import { z } from 'zod';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import type { CommittedPaymaster } from '../../paymaster/sponsored/parallelSigningCommitment.js';
import { type ModeObject, modeObjectSchema, parseModeObjectFast } from './modeObject.js';
import { permitContextSchema } from './permitContext.js';
import { address, bytes, NOT_SURE, quantity, readAddress, readQuantity } from './scalars.js';
import { parsePartialUserOperationFast, partialUserOperationSchema } from './userOperation.js';

/*
 * ERC-7677's params (https://eips.ethereum.org/EIPS/eip-7677), `pm_getPaymasterStubData` and
 * `pm_getPaymasterData`: the op, the EntryPoint, the chain id and a context, which is the Biconomy mode object
 * (modeObject.ts) plus EntryPoint v0.9's opt-ins. A schema and, for the common shape, a fast parser (scalars.ts).
 */

/**
 * EntryPoint v0.9's opt-ins in the ERC-7677 context (docs/reference/json-rpc.md, "Parallel signing on v0.9"): `signingPhase`, the
 * two-step flow of Candide's v0.9 paymaster (the account signs while Patron signs), and `validityUnit: "blocks"`,
 * a window in block numbers. Served on v0.9 only (erc7677V09Options.ts).
 */
const v09ContextSchema = z.object({
  signingPhase: z.enum(['commit', 'finalize'], { error: 'must be "commit" or "finalize"' }).optional(),
  validityUnit: z.enum(['seconds', 'blocks'], { error: 'must be "seconds" or "blocks"' }).optional(),
});

/** The account's signed EIP-2612 permit, for the token mode's permit (mode 3; permitContext.ts). */
const permitSchema = z.object({ permit: permitContextSchema.optional() });

const contextSchema = z.intersection(modeObjectSchema, z.intersection(v09ContextSchema, permitSchema));
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

const PERMIT_WITHOUT_TOKEN =
  'is a permit to pay gas in a token: send it with the token it permits (`token`, or mode "ERC20" and tokenInfo.feeTokenAddress)';

const V09_KEYS = ['signingPhase', 'validityUnit'] as const;
/** Context keys the fast parser leaves to the schema: v0.9's opt-ins and the permit (both rare, both read there). */
const SCHEMA_KEYS = [...V09_KEYS, 'permit'] as const;

const opSchema = z.intersection(partialUserOperationSchema, opPaymasterSchema);

/**
 * ERC-7677 params: `[userOp, entryPoint, chainId (hex), context]`; permissionless 0.1.x leaves the context
 * out when it is undefined. The context is the same mode object as the Biconomy dialect's, plus v0.9's opt-ins.
 */
export const erc7677Params = z
  .unknown()
  // A bad v0.9 opt-in in a well-formed call is named where it is (params[3].signingPhase), not lost in the
  // union's "must be": its issue comes first, with its path.
  .superRefine((params, ctx) => {
    const context: unknown = Array.isArray(params) ? params[3] : undefined;
    if (typeof context !== 'object' || context === null) return;
    for (const key of V09_KEYS) {
      const r = v09ContextSchema.shape[key].safeParse((context as Record<string, unknown>)[key]);
      if (!r.success)
        ctx.addIssue({ code: 'custom', message: r.error.issues[0]?.message ?? 'invalid', path: [3, key] });
    }
    const raw = context as Record<string, unknown>;
    const permit = permitSchema.shape.permit.safeParse(raw.permit);
    if (!permit.success) {
      const issue = permit.error.issues[0];
      ctx.addIssue({
        code: 'custom',
        message: issue?.message ?? 'invalid',
        path: [3, 'permit', ...(issue?.path ?? [])],
      });
    }
    // A permit pays in a token: beside a sponsored request it would be ignored, a silent wrong answer.
    const erc20 =
      raw.token !== undefined || (typeof raw.mode === 'string' && raw.mode.trim().toUpperCase() === 'ERC20');
    if (raw.permit !== undefined && !erc20) {
      ctx.addIssue({ code: 'custom', message: PERMIT_WITHOUT_TOKEN, path: [3, 'permit'] });
    }
  })
  .pipe(
    z.union(
      [z.tuple([opSchema, address, quantity, contextSchema.nullable()]), z.tuple([opSchema, address, quantity])],
      {
        error: 'must be [userOperation, entryPoint, chainId, context?]',
      },
    ),
  )
  .transform((p): [Erc7677Op, Address, bigint, Erc7677Context | null] | [Erc7677Op, Address, bigint] =>
    p.length === 4 ? [withCommitted(p[0], p[3]), p[1], p[2], p[3]] : [withCommitted(p[0], undefined), p[1], p[2]],
  );

export type Erc7677Params = z.infer<typeof erc7677Params>;

/**
 * The common shape by hand (the hot path of every v0.7+ client), else the schema: parseErc7677ParamsFast below. A
 * context with v0.9's opt-ins is rare and goes to the schema, which reads them (and a finalize's paymaster fields).
 */
export const erc7677ParamsFast = (params: unknown): Erc7677Params | undefined => {
  if (Array.isArray(params)) {
    const context: unknown = params[3];
    if (typeof context === 'object' && context !== null && SCHEMA_KEYS.some((k) => Object.hasOwn(context, k))) {
      return undefined;
    }
  }
  return parseErc7677ParamsFast(params);
};

/**
 * ERC-7677's `[userOperation, entryPoint, chainId, context?]` for the common shape, or undefined (run the schema):
 * every v0.7+ client's stub and data calls. A null or absent context stays as the schema leaves it.
 */
function parseErc7677ParamsFast(
  params: unknown,
): [PartialUserOperation, Address, bigint, ModeObject | null] | [PartialUserOperation, Address, bigint] | undefined {
  if (!Array.isArray(params) || (params.length !== 3 && params.length !== 4)) return undefined;
  const op = parsePartialUserOperationFast(params[0]);
  const entryPoint = readAddress(params[1]);
  const chainId = readQuantity(params[2]);
  if (op === undefined || entryPoint === NOT_SURE || chainId === NOT_SURE) return undefined;
  if (params.length === 3) return [op, entryPoint, chainId];
  if (params[3] === null) return [op, entryPoint, chainId, null];
  const mode = parseModeObjectFast(params[3]);
  return mode === undefined ? undefined : [op, entryPoint, chainId, mode];
}
