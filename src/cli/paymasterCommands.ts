import { type Address, createPublicClient, createWalletClient, formatEther, getAddress, http, parseEther } from 'viem';
import {
  entryPoint06Abi,
  entryPoint06Address,
  entryPoint07Address,
  entryPoint08Address,
  entryPoint09Address,
} from 'viem/account-abstraction';
import { loadPatronPaymasterArtifact, patronPaymasterAbi } from '../chain/artifacts.js';
import { loadPatronPaymasterV07Artifact } from '../chain/deployPatronPaymasterV07.js';
import { readPaymasterSigners } from '../chain/paymasterSigners.js';
import { selectCryptoBackend } from '../crypto/cryptoBackend.js';
import { ValidationError } from '../errors/PatronError.js';
import { loadPaymasterSigner } from '../paymaster/signer/loadPaymasterSigner.js';
import { addressOption, option, requireOption, rpcUrlOption } from './cliOptions.js';
import { printResult } from './cliOutput.js';
import type { ChainCommandContext } from './commands.js';
import { configuredSigner } from './configuredSigner.js';
import { requireTransactionKey } from './transactionKey.js';

/**
 * Operator commands for Patron's paymaster on any chain: deploy it, fund its EntryPoint deposit, inspect it,
 * (the signer's key: signerCommands.ts). Keys come from the environment, never from the command line (where `ps` and
 * shell history would see them): PATRON_DEPLOYER_PRIVATE_KEY or `--keystore FILE` (transactionKey.ts) pays for
 * deployments and deposits. The owner's operations (withdraw, stake, set-signer, …) are in ownerCommands.ts.
 */
/**
 * Which paymaster a deployment is, by EntryPoint version: its contract and the canonical EntryPoint it serves.
 * v0.7, v0.8 and v0.9 share PatronPaymasterV07, which derives its EntryPoint's rules from the canonical address
 * (so it deploys only against one of those).
 */
const VERSIONS = {
  '0.6': { entryPoint: entryPoint06Address, contract: 'PatronPaymaster' },
  '0.7': { entryPoint: entryPoint07Address, contract: 'PatronPaymasterV07' },
  '0.8': { entryPoint: entryPoint08Address, contract: 'PatronPaymasterV07' },
  '0.9': { entryPoint: entryPoint09Address, contract: 'PatronPaymasterV07' },
} as const;
type Version = keyof typeof VERSIONS;

function versionOption(ctx: ChainCommandContext): Version {
  const v = option(ctx, 'entry-point-version') ?? '0.6';
  if (!Object.hasOwn(VERSIONS, v)) throw new ValidationError('--entry-point-version must be 0.6, 0.7, 0.8 or 0.9');
  return v as Version;
}

async function rpcClients(ctx: ChainCommandContext, needsKey: boolean) {
  const rpcUrl = rpcUrlOption(ctx);
  const publicClient = createPublicClient({ transport: http(rpcUrl) });
  if (!needsKey) return { publicClient, wallet: undefined };
  const account = await requireTransactionKey(ctx);
  return { publicClient, wallet: createWalletClient({ account, transport: http(rpcUrl) }) };
}

/** The configured signer's address (a key here, on a PKCS#11 token or in KMS), its back end closed again. */
async function configuredSignerAddress(ctx: ChainCommandContext): Promise<Address> {
  const setting = configuredSigner(ctx, 'paymaster deploy without --signer');
  const signer = await loadPaymasterSigner({ setting, crypto: selectCryptoBackend().backend });
  await signer.close();
  return signer.address;
}

export const paymasterCommands: Record<string, (ctx: ChainCommandContext) => Promise<void>> = {
  async 'paymaster deploy'(ctx) {
    const { publicClient, wallet } = await rpcClients(ctx, true);
    if (wallet === undefined) return;
    const version = versionOption(ctx);
    const { contract } = VERSIONS[version];
    // v0.7+ paymasters take only the canonical EntryPoint of their version (the contract refuses any other).
    const entryPoint =
      version === '0.6'
        ? addressOption(ctx, 'entry-point', VERSIONS[version].entryPoint)
        : VERSIONS[version].entryPoint;
    const owner = addressOption(ctx, 'owner', wallet.account.address);
    const signer =
      option(ctx, 'signer') === undefined ? await configuredSignerAddress(ctx) : addressOption(ctx, 'signer');
    if ((await publicClient.getCode({ address: entryPoint })) === undefined) {
      throw new ValidationError(`No contract at the EntryPoint address ${entryPoint} on this chain`);
    }
    const { abi, bytecode } = version === '0.6' ? loadPatronPaymasterArtifact() : loadPatronPaymasterV07Artifact();
    const chainId = await publicClient.getChainId();
    const hash = await wallet.deployContract({ abi, bytecode, args: [entryPoint, owner, signer], chain: null });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || receipt.contractAddress == null)
      throw new ValidationError(`Deployment failed: tx ${hash}`);
    const paymaster = getAddress(receipt.contractAddress);
    const entry = version === '0.6' ? `"paymaster": "${paymaster}"` : `"paymasters": {"${version}": "${paymaster}"}`;
    printResult(
      ctx.io,
      ctx.json,
      { paymaster, chainId, entryPoint, entryPointVersion: version, contract, owner, signer, txHash: hash },
      [
        `Deployed ${contract} ${paymaster} for EntryPoint v${version} on chain ${chainId} (tx ${hash})`,
        `  EntryPoint ${entryPoint}, owner ${owner}, verifying signer ${signer}`,
        `  Add it to PATRON_CHAINS: {"chainId": ${chainId}, "rpcUrl": "…", ${entry}}`,
      ],
    );
  },

  async 'paymaster deposit'(ctx) {
    const { publicClient, wallet } = await rpcClients(ctx, true);
    if (wallet === undefined) return;
    const paymaster = addressOption(ctx, 'paymaster');
    const amountText = requireOption(ctx, 'amount');
    if (!/^\d+(\.\d{1,18})?$/.test(amountText)) throw new ValidationError('--amount is in ether, e.g. 0.5');
    const hash = await wallet.writeContract({
      address: paymaster,
      abi: patronPaymasterAbi,
      functionName: 'deposit',
      value: parseEther(amountText),
      chain: null,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new ValidationError(`Deposit failed: tx ${hash}`);
    const deposit = await publicClient.readContract({
      address: paymaster,
      abi: patronPaymasterAbi,
      functionName: 'getDeposit',
    });
    printResult(ctx.io, ctx.json, { paymaster, txHash: hash, deposit: deposit.toString() }, [
      `Deposited ${amountText} ETH for ${paymaster} (tx ${hash}); deposit now ${formatEther(deposit)} ETH`,
    ]);
  },

  async 'paymaster info'(ctx) {
    const { publicClient } = await rpcClients(ctx, false);
    const paymaster = addressOption(ctx, 'paymaster');
    const read = <F extends 'owner' | 'entryPoint' | 'getDeposit' | 'feeReceiver'>(functionName: F) =>
      publicClient.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName });
    const [chainId, owner, signers, entryPoint, deposit, feeReceiver] = await Promise.all([
      publicClient.getChainId(),
      read('owner'),
      readPaymasterSigners({ client: publicClient, paymaster }),
      read('entryPoint'),
      read('getDeposit'),
      read('feeReceiver'),
    ]);
    const info = await publicClient.readContract({
      address: entryPoint as Address,
      abi: entryPoint06Abi,
      functionName: 'getDepositInfo',
      args: [paymaster],
    });
    const result = {
      chainId,
      paymaster,
      entryPoint,
      owner,
      signers: signers.signers,
      feeReceiver,
      deposit: deposit.toString(),
      stake: info.stake.toString(),
      staked: info.staked,
      unstakeDelaySec: info.unstakeDelaySec,
    };
    printResult(ctx.io, ctx.json, result, [
      `PatronPaymaster ${paymaster} on chain ${chainId}`,
      `  EntryPoint        ${String(entryPoint)}`,
      `  owner             ${String(owner)}`,
      `  signers           ${signers.signers.join(', ') || 'none (every sponsorship is refused)'}${signers.legacy ? ' (a single verifyingSigner: deployed before signer sets)' : ''}`,
      `  fee receiver      ${String(feeReceiver)} (token-mode charges)`,
      `  deposit           ${formatEther(deposit)} ETH`,
      `  stake             ${formatEther(info.stake)} ETH${info.staked ? `, unstake delay ${info.unstakeDelaySec} s` : ' (not staked: public bundlers need a staked paymaster)'}`,
    ]);
  },
};
