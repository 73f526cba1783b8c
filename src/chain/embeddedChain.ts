import type { Provider, ProviderConfig } from '@nomicfoundation/edr';
import { type Address, getAddress, type Hex, hexToBytes, parseAbi, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type AccountAbstractionStack, deployPatronPaymastersV07, installAccountAbstractionStack } from './aaStack.js';
import { deploySimpleAccountFactoryV06 } from './accountFactories.js';
import {
  devTokenAbi,
  loadAccountAbstractionV06Artifact,
  loadDevContractArtifact,
  loadPatronPaymasterArtifact,
  patronPaymasterAbi,
} from './artifacts.js';
import { installBiconomySmartAccountV2 } from './biconomySmartAccountV2.js';
import type { PaymasterDeployment } from './chainRegistry.js';
import { createDevClient, type DevClient, waitForSuccess } from './devClient.js';
import { deployEntryPoint, ENTRY_POINT_VERSIONS, type EntryPointVersion } from './entryPoints.js';
import { type ForkOrigin, readForkOrigin } from './forkOrigin.js';
import { prepareFork } from './prepareFork.js';

/**
 * The in-process dev chain: Hardhat's Rust EVM (`@nomicfoundation/edr`, pinned to 0.13.0, the last release
 * that runs on Node 20) behind an EIP-1193 `request` function, so viem talks to it like to any node. No port,
 * no child process; a chain boots in ~25 ms and a round trip costs ~0.04 ms. EDR's API is internal to Hardhat
 * and changes between versions, which is why every EDR call lives in this one file.
 */

type Edr = typeof import('@nomicfoundation/edr');
type EdrRuntime = { readonly edr: Edr; readonly context: InstanceType<Edr['EdrContext']> };

// The one module-level singleton in the project, on purpose: EDR documents `new EdrContext()` as "should only
// be called once" per process (it owns the native runtime and the provider-factory registry), so it cannot be
// a dependency created per caller. It is lazy so that importing this module never loads the 30 MB addon.
let edrRuntime: Promise<EdrRuntime> | undefined;

function loadEdr(): Promise<EdrRuntime> {
  edrRuntime ??= (async () => {
    const edr = await import('@nomicfoundation/edr');
    const context = new edr.EdrContext();
    await context.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory());
    await context.registerProviderFactory(edr.OP_CHAIN_TYPE, edr.opProviderFactory());
    return { edr, context };
  })();
  return edrRuntime;
}

/** A JSON-RPC error as EIP-1193 shapes it; viem reads `code` and finds revert data in `data`. */
export class EmbeddedChainRpcError extends Error {
  override name = 'EmbeddedChainRpcError' as const;
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/**
 * EDR reports a revert as code -32000 with `data: { data: '0x…', reason: { Revert: '0x…' } }`. Geth (and
 * EIP-1474's code 3) use `{ code: 3, message: 'execution reverted', data: '0x…' }`, the shape viem decodes
 * into ContractFunctionRevertedError; so reverts are reshaped to it and everything else passes through.
 */
function toRpcError(error: { code: number; message: string; data?: unknown }): EmbeddedChainRpcError {
  const data = error.data;
  if (typeof data === 'object' && data !== null && 'reason' in data && 'data' in data) {
    const { reason, data: revertData } = data;
    if (typeof reason === 'object' && reason !== null && 'Revert' in reason && typeof revertData === 'string') {
      return new EmbeddedChainRpcError(3, `execution reverted: ${error.message}`, revertData);
    }
  }
  return new EmbeddedChainRpcError(error.code, error.message, error.data);
}

export interface EmbeddedChain {
  readonly chainId: number;
  request(args: { method: string; params?: readonly unknown[] | undefined }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * What the chain is: an Ethereum L1 (Prague), or an OP-stack L2 (EDR's OP chain type at its latest hardfork, with the
 * OP genesis predeploys: the GasPriceOracle and L1Block whose L1 fee the L2's transactions pay, for the L1-fee bound).
 */
export type EmbeddedChainType = 'l1' | 'opStack';

export interface EmbeddedChainOptions {
  readonly chainId?: number;
  /** 'l1' unless set. */
  readonly chainType?: EmbeddedChainType;
  /** Addresses that start with `balance` wei; transactions are signed locally (viem local accounts). */
  readonly fundedAccounts: readonly Hex[];
  readonly balance?: bigint;
  /**
   * Start as a fork of this endpoint at this block (chainId must then be the endpoint's own): state is read from it
   * lazily and cached in `cacheDir`; nothing is funded at genesis (a fork has no genesis: see startDevChain).
   */
  readonly fork?: EmbeddedChainFork;
}

export interface EmbeddedChainFork {
  readonly url: string;
  readonly blockNumber: bigint;
  readonly httpHeaders: Readonly<Record<string, string>>;
  /** Where EDR caches the endpoint's answers (it writes `./edr-cache` in the working directory otherwise). */
  readonly cacheDir: string;
}

interface JsonRpcResponse {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What each funded account of the dev chain starts with: at genesis, or set on a fork. */
const DEV_ACCOUNT_BALANCE = 10n ** 24n;

/** EDR's provider configuration for a local (non-forked) Prague chain that behaves like a real node. */
function providerConfig(edr: Edr, options: EmbeddedChainOptions): ProviderConfig {
  const chainId = BigInt(options.chainId ?? 31337);
  const balance = options.balance ?? DEV_ACCOUNT_BALANCE;
  const gasLimit = 60_000_000n;
  const op = options.chainType === 'opStack' ? edr.opLatestHardfork() : undefined;
  const hardfork = op === undefined ? edr.PRAGUE : edr.opHardforkToString(op);
  const fork = options.fork;
  return {
    chainId,
    networkId: chainId,
    hardfork,
    // On a fork the remote's system contracts and balances stand; genesis predeploys would overwrite them.
    genesisState:
      fork !== undefined
        ? []
        : [
            ...(op === undefined ? edr.l1GenesisState(edr.l1HardforkFromString(edr.PRAGUE)) : edr.opGenesisState(op)),
            ...options.fundedAccounts.map((address) => ({ address: hexToBytes(address), balance })),
          ],
    // Transactions are signed by viem local accounts (eth_sendRawTransaction), so the node holds no keys.
    ownedAccounts: [],
    initialBaseFeePerGas: 1_000_000_000n,
    minGasPrice: 0n,
    mining: { autoMine: true, memPool: { order: edr.MineOrdering.Priority }, blockGasLimit: gasLimit },
    network:
      fork === undefined
        ? { genesisBlockGasLimit: gasLimit }
        : {
            url: fork.url,
            blockNumber: fork.blockNumber,
            cacheDir: fork.cacheDir,
            httpHeaders: Object.entries(fork.httpHeaders).map(([name, value]) => ({ name, value })),
            // EDR runs blocks up to the fork block under the chain's hardfork history, which it knows for a list of
            // public chains only; on any other (a local node, a private L2) even an eth_call at the fork block fails
            // with "No known hardfork". So the history is declared as this one hardfork from block 0: calls at old
            // blocks then run under today's rules, which a dev chain can live with (docs/guides/fork-mode.md, "Limits").
            chainOverrides: [
              {
                chainId,
                name: `fork of chain ${chainId}`,
                hardforkActivationOverrides: [{ condition: { blockNumber: 0n }, hardfork }],
              },
            ],
          },
    defaultTransactionGasLimit: 30_000_000n,
    // A reverting eth_call must be a JSON-RPC error (else EDR returns the revert data as a result).
    bailOnCallFailure: true,
    // A reverting transaction is mined with status 0, as on a real node.
    bailOnTransactionFailure: false,
    allowBlocksWithSameTimestamp: true,
    allowUnlimitedContractSize: false,
    coinbase: hexToBytes(zeroAddress),
    observability: {},
    precompileOverrides: [],
  };
}

export async function createEmbeddedChain(options: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const { edr, context } = await loadEdr();
  let provider: Provider | undefined = await context.createProvider(
    options.chainType === 'opStack' ? edr.OP_CHAIN_TYPE : edr.L1_CHAIN_TYPE,
    providerConfig(edr, options),
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new edr.ContractDecoder(),
  );
  let nextId = 1;
  return {
    chainId: options.chainId ?? 31337,
    async request({ method, params }) {
      // 4900 is EIP-1193's "disconnected" code.
      if (provider === undefined) throw new EmbeddedChainRpcError(4900, 'the embedded chain is closed');
      const id = nextId++;
      const response = await provider.handleRequest(
        JSON.stringify({ jsonrpc: '2.0', id, method, params: params ?? [] }),
      );
      const raw: unknown = response.data;
      const body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as JsonRpcResponse;
      if (body.error !== undefined) throw toRpcError(body.error);
      return body.result;
    },
    async close() {
      // EDR has no provider shutdown and keeps no handles open; dropping the reference lets it be freed.
      provider = undefined;
    },
  };
}

export interface DeployPatronPaymasterParams {
  readonly client: DevClient;
  readonly entryPoint: Address;
  readonly owner: Address;
  readonly verifyingSigner: Address;
}

export async function deployPatronPaymaster(params: DeployPatronPaymasterParams): Promise<Address> {
  const { client, entryPoint, owner, verifyingSigner } = params;
  const hash = await client.deployContract({
    abi: patronPaymasterAbi,
    bytecode: loadPatronPaymasterArtifact().bytecode,
    args: [entryPoint, owner, verifyingSigner],
  });
  const receipt = await waitForSuccess(client, hash, 'PatronPaymaster deployment');
  if (receipt.contractAddress == null) throw new Error('PatronPaymaster deployment returned no address');
  return getAddress(receipt.contractAddress);
}

export async function deploySimpleAccountFactory(params: { client: DevClient; entryPoint: Address }): Promise<Address> {
  const { abi, bytecode } = loadAccountAbstractionV06Artifact('SimpleAccountFactory');
  const hash = await params.client.deployContract({ abi, bytecode, args: [params.entryPoint] });
  const receipt = await waitForSuccess(params.client, hash, 'SimpleAccountFactory deployment');
  if (receipt.contractAddress == null) throw new Error('SimpleAccountFactory deployment returned no address');
  return getAddress(receipt.contractAddress);
}

export interface DevTokenInfo {
  readonly address: Address;
  readonly symbol: string;
  readonly decimals: number;
  /**
   * Deployed from contracts/DevFiatToken.sol: USDC's EIP-2612 permit (bytes signature, ERC-1271 owners, no
   * TIMESTAMP at the maximum deadline), which Patron's permit mode needs (docs/guides/token-mode.md).
   */
  readonly permit: boolean;
}

const simpleAccountFactoryAbi = parseAbi(['function getAddress(address owner, uint256 salt) view returns (address)']);

/**
 * Deploys contracts/DevToken.sol (an open-mint ERC-20, dev chain and tests only), or with `permit`
 * contracts/DevFiatToken.sol (the same plus USDC's permit).
 */
export async function deployDevToken(params: {
  client: DevClient;
  name: string;
  symbol: string;
  decimals: number;
  permit?: boolean | undefined;
}): Promise<DevTokenInfo> {
  const permit = params.permit === true;
  const hash = await params.client.deployContract({
    abi: devTokenAbi,
    bytecode: loadDevContractArtifact(permit ? 'DevFiatToken' : 'DevToken').bytecode,
    args: [params.name, params.symbol, params.decimals],
  });
  const receipt = await waitForSuccess(params.client, hash, `${params.symbol} deployment`);
  if (receipt.contractAddress == null) throw new Error(`${params.symbol} deployment returned no address`);
  return { address: getAddress(receipt.contractAddress), symbol: params.symbol, decimals: params.decimals, permit };
}

/**
 * The dev chain's fee tokens: a 6-decimal stand-in for USDC with USDC's permit, and an 18-decimal token without one
 * (OpenZeppelin's plain ERC-20), so both kinds of token mode are there to try.
 */
export const DEV_TOKENS = [
  { name: 'USD Coin (Patron dev chain)', symbol: 'USDC', decimals: 6, permit: true },
  { name: 'Patron Dev Token', symbol: 'PDT', decimals: 18, permit: false },
] as const;

export interface StartDevChainParams {
  /** The service's verifying signer, written into the paymaster. */
  readonly signerAddress: Address;
  /** Funded; deploys everything and owns the paymaster. */
  readonly ownerPrivateKey: Hex;
  /** Paid into the paymaster's EntryPoint deposit, which sponsored operations draw from. */
  readonly depositWei: bigint;
  readonly chainId?: number;
  /** An Ethereum L1 unless set (EmbeddedChainType). */
  readonly chainType?: EmbeddedChainType;
  /**
   * Owner of the dev chain's demo SimpleAccount (salt 0): its counterfactual address gets 1,000,000 of each dev
   * token, so token-paid operations work on the first try.
   */
  readonly demoAccountOwner?: Address;
  /** Further addresses funded at genesis, besides the owner (the dev bundler's executor and utility wallets). */
  readonly fundedAccounts?: readonly Address[];
  /**
   * Fork this endpoint instead of starting an empty chain (docs/guides/fork-mode.md): the chain id and, unless
   * `chainType` is given, the chain type are the endpoint's; whatever the set-up below finds there is kept.
   */
  readonly fork?: {
    readonly url: string;
    /** The endpoint's latest block when undefined. */
    readonly blockNumber: bigint | undefined;
    readonly httpHeaders: Readonly<Record<string, string>>;
    readonly cacheDir: string;
  };
  /** The wall clock in ms (Date.now unless given): a fork's first block is mined at it (prepareFork.ts). */
  readonly now?: () => number;
}

/**
 * The dev chain's paymasters are staked at deployment, as a production paymaster must be for the token mode
 * (ERC-7562; docs/guides/token-mode.md, "Paying gas in ERC-20"): 1 ETH with a one-day unstake delay, the values public bundlers
 * commonly require.
 */
export const DEV_PAYMASTER_STAKE = { wei: 10n ** 18n, unstakeDelaySec: 86_400 } as const;

/** Whole tokens of each DEV_TOKENS minted to the demo account at start. */
export const DEMO_ACCOUNT_TOKEN_GRANT = 1_000_000n;

/** `entryPoint`, `paymaster` and `simpleAccountFactory` are the v0.6 ones; the stack has every version's. */
export interface DevChain extends AccountAbstractionStack {
  readonly chain: EmbeddedChain;
  /** The owner's client. */
  readonly client: DevClient;
  readonly entryPoint: Address;
  readonly paymaster: Address;
  /** Patron's paymaster per EntryPoint (v0.6: `paymaster`; v0.7+: PatronPaymasterV07), each funded alike. */
  readonly paymasters: Readonly<Record<EntryPointVersion, Address>>;
  readonly simpleAccountFactory: Address;
  /** DEV_TOKENS, deployed (same order). */
  readonly tokens: readonly DevTokenInfo[];
  /** The demo SimpleAccount funded with the dev tokens, when an owner was given. */
  readonly demoAccount?: { readonly owner: Address; readonly address: Address };
  /** What the chain forks, when it is a fork. */
  readonly fork?: ForkOrigin;
  close(): Promise<void>;
}

/**
 * One embedded chain with EntryPoint v0.6, a funded PatronPaymaster, a SimpleAccountFactory and Biconomy Smart
 * Account v2 at the addresses its SDK defaults to; and EntryPoints v0.7 to v0.9 with SimpleAccount, Simple7702
 * and Safe 4337 where today's SDKs look for them (aaStack.ts).
 */
export async function startDevChain(params: StartDevChainParams): Promise<DevChain> {
  const owner = privateKeyToAccount(params.ownerPrivateKey);
  const fundedAccounts = [owner.address, ...(params.fundedAccounts ?? [])];
  const origin = params.fork === undefined ? undefined : await readForkOrigin(params.fork);
  const chainId = origin?.chainId ?? params.chainId;
  const chainType = params.chainType ?? (origin?.opStack === true ? 'opStack' : undefined);
  const chain = await createEmbeddedChain({
    ...(chainId === undefined ? {} : { chainId }),
    ...(chainType === undefined ? {} : { chainType }),
    fundedAccounts,
    ...(origin === undefined || params.fork === undefined
      ? {}
      : { fork: { ...origin, cacheDir: params.fork.cacheDir } }),
  });
  const client = createDevClient({ chain, account: owner });
  if (origin !== undefined) {
    const nowSeconds = BigInt(Math.floor((params.now ?? Date.now)() / 1000));
    await prepareFork({ client, origin, accounts: fundedAccounts, balance: DEV_ACCOUNT_BALANCE, nowSeconds });
  }
  // Set-up transactions are signed by the node for the owner, impersonated while it lasts: signing each
  // deployment (up to 24 KB of calldata) in JavaScript took longer than the EVM took to run them all.
  await client.impersonateAccount({ address: owner.address });
  const setup = createDevClient({ chain, account: { address: owner.address, type: 'json-rpc' } });
  const entryPoint = await deployEntryPoint(setup, '0.6');
  const paymaster = await deployPatronPaymaster({
    client: setup,
    entryPoint,
    owner: owner.address,
    verifyingSigner: params.signerAddress,
  });
  const simpleAccountFactory = await deploySimpleAccountFactory({ client: setup, entryPoint });
  await installBiconomySmartAccountV2({ client: setup, entryPoint });
  const stack = await installAccountAbstractionStack(setup, simpleAccountFactory);
  const tokens: DevTokenInfo[] = [];
  for (const t of DEV_TOKENS) tokens.push(await deployDevToken({ client: setup, ...t }));
  let demoAccount: DevChain['demoAccount'];
  if (params.demoAccountOwner !== undefined) {
    const address = await setup.readContract({
      address: simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args: [params.demoAccountOwner, 0n],
    });
    for (const t of tokens) {
      const hash = await setup.writeContract({
        address: t.address,
        abi: devTokenAbi,
        functionName: 'mint',
        args: [address, DEMO_ACCOUNT_TOKEN_GRANT * 10n ** BigInt(t.decimals)],
      });
      await waitForSuccess(setup, hash, `${t.symbol} grant to the demo account`);
    }
    demoAccount = { owner: params.demoAccountOwner, address };
  }
  if (params.depositWei > 0n) {
    const hash = await setup.writeContract({
      address: paymaster,
      abi: patronPaymasterAbi,
      functionName: 'deposit',
      value: params.depositWei,
    });
    await waitForSuccess(setup, hash, 'paymaster deposit');
  }
  const stakeHash = await setup.writeContract({
    address: paymaster,
    abi: patronPaymasterAbi,
    functionName: 'addStake',
    args: [DEV_PAYMASTER_STAKE.unstakeDelaySec],
    value: DEV_PAYMASTER_STAKE.wei,
  });
  await waitForSuccess(setup, stakeHash, 'paymaster stake');
  const paymastersV07 = await deployPatronPaymastersV07({
    client: setup,
    entryPoints: stack.entryPoints,
    owner: owner.address,
    verifyingSigner: params.signerAddress,
    depositWei: params.depositWei,
    stake: DEV_PAYMASTER_STAKE,
  });
  await deploySimpleAccountFactoryV06(setup);
  await client.stopImpersonatingAccount({ address: owner.address });
  return {
    ...stack,
    chain,
    client,
    entryPoint,
    paymaster,
    paymasters: { '0.6': paymaster, ...paymastersV07 },
    simpleAccountFactory,
    tokens,
    ...(demoAccount === undefined ? {} : { demoAccount }),
    ...(origin === undefined ? {} : { fork: origin }),
    close: () => chain.close(),
  };
}

/** The dev chain's paymaster deployments, v0.6 first (the chain's own view): one per EntryPoint version. */
export function devChainDeployments(dev: Pick<DevChain, 'entryPoints' | 'paymasters'>): readonly PaymasterDeployment[] {
  return ENTRY_POINT_VERSIONS.map((entryPointVersion) => ({
    entryPointVersion,
    entryPoint: dev.entryPoints[entryPointVersion],
    paymaster: dev.paymasters[entryPointVersion],
  }));
}
