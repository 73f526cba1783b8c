import { type Address, getAddress, isAddressEqual } from 'viem';
import { errorSummary } from '../errors/errorSummary.js';
import { patronPaymasterAbi } from './artifacts.js';
import { type ChainRuntime, deploymentViews } from './chainRegistry.js';
import { addSignerHint, readPaymasterSigners } from './paymasterSigners.js';
import { ARBITRUM_NODE_INTERFACE, OP_GAS_PRICE_ORACLE, readL1Fee } from './readL1Fee.js';
import { withTimeout } from './withTimeout.js';

/**
 * Start-up checks of every chain the service will sign for (main.ts refuses to start on any problem): a chain
 * configured as id 1 whose RPC serves 31337 would start silently and every signature would then fail on chain
 * with AA34. Checked: the RPC answers within the timeout; `eth_chainId` is the configured id; the EntryPoint
 * and the paymaster have code; the paymaster's `entryPoint()` is the configured EntryPoint; this service's
 * signer is among the paymaster's signers; and a chain's L1 fee oracle (`l1Fee`) answers. The signers' check
 * refuses too, rather than warning: with a key the paymaster does not accept every sponsorship this process signs
 * fails (AA34) and costs the clients a round trip each, so a rotation adds the new key on chain
 * (`paymaster add-signer`) before the service starts with it.
 * Returns one problem per finding, its message naming the chain, what was expected and what was found;
 * `unreachable` marks an RPC that did not answer (it may at the next start: main.ts exits 1, not 78, for it alone).
 */
export interface ChainProblem {
  readonly message: string;
  readonly unreachable: boolean;
}

export async function verifyChains(args: {
  chains: readonly ChainRuntime[];
  signer: Address;
  timeoutMs?: number;
}): Promise<ChainProblem[]> {
  const timeoutMs = args.timeoutMs ?? 10_000;
  // Every paymaster deployment of every chain (one per EntryPoint version) is checked the same way.
  const views = args.chains.flatMap(deploymentViews);
  const results = await Promise.all(views.map((c) => verifyChain(c, args.signer, timeoutMs)));
  // A chain found wrong already (an RPC down, the wrong chain) is not asked for its L1 fee as well.
  const wrong = new Set(views.filter((_, i) => (results[i]?.length ?? 0) > 0).map((v) => v.chainId));
  const l1 = await Promise.all(args.chains.filter((c) => !wrong.has(c.chainId)).map((c) => verifyL1Fee(c, timeoutMs)));
  return [...results.flat(), ...l1.flat()];
}

/**
 * A chain configured with an L1 fee oracle (`l1Fee`) must answer it: otherwise every fee read fails and, once the
 * first minute passes, nothing is signed there (-32041). The kind set on a chain of another stack is the likely cause.
 */
async function verifyL1Fee(chain: ChainRuntime, timeoutMs: number): Promise<ChainProblem[]> {
  const kind = chain.l1Fee;
  if (kind === undefined) return [];
  try {
    const read = async () => {
      const block = BigInt((await chain.request({ method: 'eth_blockNumber', params: [] })) as string);
      return readL1Fee(chain, kind, block);
    };
    await withTimeout(read(), timeoutMs);
    return [];
  } catch (err) {
    const oracle =
      kind === 'opStack'
        ? `the OP stack's GasPriceOracle at ${OP_GAS_PRICE_ORACLE} (an OP-stack chain since Ecotone?)`
        : `Arbitrum's NodeInterface at ${ARBITRUM_NODE_INTERFACE} (an Arbitrum Nitro chain?)`;
    return [found(`chain ${chain.chainId}: l1Fee is "${kind}" but ${oracle} could not be read (${errorSummary(err)})`)];
  }
}

const found = (message: string): ChainProblem => ({ message, unreachable: false });

async function verifyChain(chain: ChainRuntime, signer: Address, timeoutMs: number): Promise<ChainProblem[]> {
  const name =
    chain.deployments.length > 1
      ? `chain ${chain.chainId} (EntryPoint v${chain.entryPointVersion})`
      : `chain ${chain.chainId}`;
  try {
    return (await withTimeout(checks(chain, signer, name), timeoutMs)).map(found);
  } catch (err) {
    // The cause chain ("HTTP request failed … connect ECONNREFUSED"), its URL cut to the origin (API keys).
    return [{ message: `${name}: its RPC could not be read (${errorSummary(err)})`, unreachable: true }];
  }
}

async function checks(chain: ChainRuntime, signer: Address, name: string): Promise<string[]> {
  const rpcChainId = Number(BigInt((await chain.request({ method: 'eth_chainId', params: [] })) as string));
  if (rpcChainId !== chain.chainId) {
    return [`${name}: its RPC serves chain ${rpcChainId}, not ${chain.chainId} (check PATRON_CHAINS rpcUrl)`];
  }
  const [entryPointCode, paymasterCode] = await Promise.all([
    chain.client.getCode({ address: chain.entryPoint }),
    chain.client.getCode({ address: chain.paymaster }),
  ]);
  const problems: string[] = [];
  if (entryPointCode === undefined || entryPointCode === '0x') {
    problems.push(`${name}: no contract at the EntryPoint ${getAddress(chain.entryPoint)}`);
  }
  if (paymasterCode === undefined || paymasterCode === '0x') {
    problems.push(
      `${name}: no contract at the paymaster ${getAddress(chain.paymaster)} (deploy it with patron paymaster deploy)`,
    );
    return problems;
  }
  const [entryPoint, onChain] = await Promise.all([
    chain.client
      .readContract({ address: chain.paymaster, abi: patronPaymasterAbi, functionName: 'entryPoint' })
      .catch(() => undefined),
    readPaymasterSigners(chain).catch(() => undefined),
  ]);
  if (entryPoint === undefined || onChain === undefined) {
    problems.push(
      `${name}: the contract at ${getAddress(chain.paymaster)} is not a Patron paymaster (entryPoint() or signers() failed)`,
    );
  } else {
    if (!isAddressEqual(entryPoint, chain.entryPoint)) {
      problems.push(
        `${name}: the paymaster's EntryPoint is ${getAddress(entryPoint)}, not the configured ${getAddress(chain.entryPoint)}`,
      );
    }
    if (!onChain.signers.some((s) => isAddressEqual(s, signer))) {
      problems.push(
        `${name}: the paymaster ${getAddress(chain.paymaster)} does not accept this service's signer ${getAddress(signer)} (its signers: ${onChain.signers.join(', ') || 'none'}); ${addSignerHint({ paymaster: chain.paymaster, signer, legacy: onChain.legacy })}`,
      );
    }
  }
  return problems;
}
