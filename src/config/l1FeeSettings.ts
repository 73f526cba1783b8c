import { z } from 'zod';

/**
 * Where an L2's L1 data fee is read (PATRON_CHAINS[i].l1Fee; docs/guides/signing-bounds.md, "L1 data on L2s"): the
 * bundler adds the op's L1 data fee to its preVerificationGas, and Patron's bound follows the same oracle, per block.
 * - `opStack`: the GasPriceOracle predeploy (0x420…0F) of an OP-stack chain since Ecotone (Optimism, Base, …);
 * - `arbitrum`: the NodeInterface (0x…C8) of an Arbitrum Nitro chain (Arbitrum One, Nova, Orbit chains).
 * Unset, the chain has no oracle: `bounds.l1DataGasPerByte` alone prices the L1 data, as on an L1 (0).
 */
export const L1_FEE_KINDS = ['opStack', 'arbitrum'] as const;
export type L1FeeKind = (typeof L1_FEE_KINDS)[number];

/** What operators write instead, each with the kind it means (the chains' and stacks' own names). */
const NEAR_MISSES: Readonly<Record<string, L1FeeKind>> = {
  op: 'opStack',
  opstack: 'opStack',
  'op-stack': 'opStack',
  op_stack: 'opStack',
  optimism: 'opStack',
  base: 'opStack',
  bedrock: 'opStack',
  arb: 'arbitrum',
  arbitrumone: 'arbitrum',
  'arbitrum-one': 'arbitrum',
  nitro: 'arbitrum',
  orbit: 'arbitrum',
};

const EXPECTED =
  'l1Fee must be "opStack" (an OP-stack chain: Optimism, Base, …) or "arbitrum" (an Arbitrum Nitro chain)';

export const l1FeeSchema = z.unknown().transform((v, ctx): L1FeeKind => {
  if (v === 'opStack' || v === 'arbitrum') return v;
  const near = typeof v === 'string' ? NEAR_MISSES[v.trim().toLowerCase()] : undefined;
  const shown = typeof v === 'string' ? `"${v}"` : JSON.stringify(v);
  ctx.addIssue({
    code: 'custom',
    message: near === undefined ? `${EXPECTED}; ${shown} is not one` : `${EXPECTED}; did you mean "${near}"?`,
  });
  return z.NEVER;
});
