import type { ChainSettings } from './chainSettings.js';

/** The embedded dev chain's id (chain/embeddedChain.ts starts it with this one). */
export const DEV_CHAIN_ID = 31337;

/**
 * The chains a deployment configured this way serves: the dev chain when it runs, and PATRON_CHAINS. The CLI
 * reads it from its own environment, so it must be run with the server's PATRON_CHAINS (the server itself checks
 * against the chains it actually built, deps.ts).
 */
export function configuredChainIds(paymaster: Pick<ChainSettings, 'devChain' | 'chains'>): number[] {
  const ids = paymaster.chains.map((c) => c.chainId);
  return (paymaster.devChain ? [DEV_CHAIN_ID, ...ids] : ids).sort((a, b) => a - b);
}

/**
 * Why the service must not start serving nothing: production with no chain configured would listen, answer every
 * paymaster call with "chain not served" and look healthy. Checked when the server starts (main.ts), not in
 * loadConfig, because the CLI must run before any chain exists (`patron signer address`, `paymaster deploy`).
 */
export function noChainProblem(config: {
  readonly production: boolean;
  readonly paymaster: Pick<ChainSettings, 'devChain' | 'chains'>;
}): string | undefined {
  if (!config.production || configuredChainIds(config.paymaster).length > 0) return undefined;
  return (
    'Production mode serves no chain: set PATRON_CHAINS, e.g. ' +
    '[{"chainId":8453,"rpcUrl":"https://…","paymasters":{"0.7":"0x…"}}] (deploy the paymaster with ' +
    '`patron paymaster deploy`), or PATRON_DEV_CHAIN=true to run the in-process dev chain'
  );
}
