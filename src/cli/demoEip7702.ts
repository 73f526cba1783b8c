import { to7702SimpleSmartAccount } from 'permissionless/accounts';
import { type Address, concat, createPublicClient, defineChain, type Hex, http, parseEventLogs, toHex } from 'viem';
import {
  entryPoint08Abi,
  formatUserOperationRequest,
  getUserOperationHash,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/PatronError.js';
import { type ChainInfo, rpc, type Wallet } from './demoSteps.js';

/** What Patron's ERC-7677 answers carry for an EntryPoint v0.7+ op (hex quantities). */
interface Erc7677Fields {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
  callGasLimit?: Hex;
  verificationGasLimit?: Hex;
  preVerificationGas?: Hex;
}

/**
 * An EIP-7702 op on EntryPoint v0.8, through the same paymaster URL: a fresh EOA becomes a Simple7702Account
 * (permissionless `to7702SimpleSmartAccount`, the account dApps use for this) by an authorization it signs
 * itself and that travels with its first op as `eip7702Auth`. Patron answers the ERC-7677 stub, then the final
 * data with the limits it computes (the demo has no bundler to estimate them), binding the delegate the
 * authorization names; the op is sent by handleOps in a type-4 transaction carrying that authorization, as a
 * bundler would, and the EOA's code is then the delegation designator.
 */
export async function sponsor7702({
  paymasterUrl,
  chainUrl,
  bundler,
  dev,
  fees,
  webhookData,
  target,
  print,
}: {
  paymasterUrl: string;
  /** The dev chain's JSON-RPC route on the service. */
  chainUrl: string;
  bundler: Wallet;
  dev: ChainInfo;
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  /** What the demo's webhook approves: the policy of the dApp holds for every EntryPoint. */
  webhookData: Record<string, unknown>;
  /** Where the op's one call goes (any address: the op is about who pays, not what it calls). */
  target: Address;
  print: (line: string) => void;
}) {
  // The account's getNonce keys its nonce manager by client.chain.id, so this client names the chain.
  const chain = defineChain({
    id: dev.chainId,
    name: 'Patron dev chain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chainUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(chainUrl) });
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await to7702SimpleSmartAccount({ client, owner });
  const entryPoint = account.entryPoint.address;
  const delegate = account.authorization.address;
  const authorization = await owner.signAuthorization({
    address: delegate,
    chainId: dev.chainId,
    nonce: await client.getTransactionCount({ address: owner.address }),
  });
  print(
    `13. EntryPoint v0.8 and EIP-7702: a new EOA ${owner.address} signs an authorization delegating to Simple7702Account ${delegate}; it travels with its first op (eip7702Auth)`,
  );
  const op: UserOperation<'0.8'> = {
    sender: owner.address,
    nonce: await account.getNonce(),
    callData: await account.encodeCalls([{ to: target, value: 0n, data: '0x' }]),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    ...fees,
    signature: await account.getStubSignature(),
    authorization,
  };
  const chainHex = toHex(dev.chainId);
  const context = { sponsorshipInfo: { webhookData } };
  const stub = await rpc(paymasterUrl, 'pm_getPaymasterStubData', [
    formatUserOperationRequest(op),
    entryPoint,
    chainHex,
    context,
  ]);
  if (stub.result === undefined) throw new ValidationError(`v0.8 stub failed: ${stub.error?.message ?? 'no result'}`);
  const s = stub.result as Erc7677Fields;
  print(
    `14. pm_getPaymasterStubData naming EntryPoint ${entryPoint} → paymaster ${s.paymaster}, paymasterVerificationGasLimit ${BigInt(s.paymasterVerificationGasLimit)}, paymasterPostOpGasLimit ${BigInt(s.paymasterPostOpGasLimit)}`,
  );
  const withStub = {
    ...op,
    paymaster: s.paymaster,
    paymasterData: s.paymasterData,
    paymasterVerificationGasLimit: BigInt(s.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(s.paymasterPostOpGasLimit),
  };
  // calculateGasLimits: Patron fills the zero account limits, as it did for the v0.6 op (no bundler estimates here).
  const data = await rpc(paymasterUrl, 'pm_getPaymasterData', [
    formatUserOperationRequest(withStub),
    entryPoint,
    chainHex,
    { ...context, calculateGasLimits: true },
  ]);
  if (data.result === undefined) throw new ValidationError(`v0.8 data failed: ${data.error?.message ?? 'no result'}`);
  const d = data.result as Erc7677Fields;
  const final: UserOperation<'0.8'> = {
    ...withStub,
    callGasLimit: BigInt(d.callGasLimit ?? '0x0'),
    verificationGasLimit: BigInt(d.verificationGasLimit ?? '0x0'),
    preVerificationGas: BigInt(d.preVerificationGas ?? '0x0'),
    paymaster: d.paymaster,
    paymasterData: d.paymasterData,
    paymasterVerificationGasLimit: BigInt(d.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(d.paymasterPostOpGasLimit),
  };
  print(`15. pm_getPaymasterData (calculateGasLimits) → paymaster ${d.paymaster}`);
  print(
    `   callGasLimit ${final.callGasLimit}, verificationGasLimit ${final.verificationGasLimit}, preVerificationGas ${final.preVerificationGas}`,
  );
  print(`   paymasterData ${d.paymasterData}`);

  const signed = { ...final, signature: await account.signUserOperation({ ...final, chainId: dev.chainId }) };
  const userOpHash = getUserOperationHash({
    chainId: dev.chainId,
    entryPointAddress: entryPoint,
    entryPointVersion: '0.8',
    userOperation: signed,
  });
  print(`16. Signed by the EOA (EIP-712, EntryPoint v0.8): userOpHash ${userOpHash}`);

  const deposit = () =>
    client.readContract({ address: entryPoint, abi: entryPoint08Abi, functionName: 'balanceOf', args: [d.paymaster] });
  const depositBefore = await deposit();
  const beneficiary = bundler.account?.address;
  if (beneficiary === undefined) throw new ValidationError('the bundler wallet has no account');
  // The authorization must be on chain before the EntryPoint validates the op: a type-4 transaction installs it first.
  const hash = await bundler.writeContract({
    chain: null,
    account: bundler.account ?? null,
    address: entryPoint,
    abi: entryPoint08Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], beneficiary],
    authorizationList: [authorization],
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const [event] = parseEventLogs({ abi: entryPoint08Abi, eventName: 'UserOperationEvent', logs: receipt.logs });
  const depositAfter = await deposit();
  print(
    `17. handleOps by bundler ${beneficiary} with authorizationList [the EOA's authorization], transaction type ${receipt.type}: tx ${receipt.transactionHash}`,
  );
  print(`   block ${receipt.blockNumber}, status ${receipt.status}, gasUsed ${receipt.gasUsed}`);
  print(
    `   UserOperationEvent: success ${String(event?.args.success)}, paymaster ${String(event?.args.paymaster)}, actualGasCost ${String(event?.args.actualGasCost)} wei`,
  );
  print(`   paymaster deposit ${depositBefore} → ${depositAfter} wei (paid ${depositBefore - depositAfter})`);
  const code = await client.getCode({ address: owner.address });
  const designator = concat(['0xef0100', delegate]).toLowerCase();
  print(
    `   code of ${owner.address}: ${code ?? '0x'} (${code?.toLowerCase() === designator ? '0xef0100 ‖ Simple7702Account: delegated' : 'not the expected delegation'})`,
  );
}
