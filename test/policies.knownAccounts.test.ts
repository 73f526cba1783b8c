import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  concat,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  pad,
  parseAbi,
  parseEventLogs,
  toHex,
} from 'viem';
import { entryPoint06Abi, entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import { SIMPLE_ACCOUNT_PROXY_CODE_HASHES } from '../src/chain/canonicalAccounts.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { ERC1967_IMPLEMENTATION_SLOT } from '../src/policies/knownAccounts.js';
import { BURNER_CODE } from './helpers/attackerAccount.js';
import {
  buildDeployingOp,
  KEYS,
  mintToken,
  type PatronFixture,
  paymasterDeposit,
  signAccount,
  signPaymaster,
  simpleAccountFactoryAbi,
  submitHandleOps,
  testKey,
  tokenBalance,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, rpcV2 } from './helpers/rpcV07.js';
import { sdkClientOf } from './helpers/simpleAccountV07.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * Issue 20, hole 3, the attacker's way: a policy admits only `transfer` on one token contract and sponsors no
 * deployment; an attacker with the public API key brings its own account code (it validates anything and burns the
 * gas), with callData reading `execute(token, 0, transfer…)`. Before, Patron decoded that callData as if the sender
 * were a SimpleAccount and signed; its bundler then burnt the deposit. Now the allowlist matches only a sender whose
 * account Patron knows (docs/guides/policies.md, "Which accounts a contract allowlist knows"): the attacker's code, a known proxy
 * pointed at the attacker's code, a factory of its own and (v0.9) a sender that is not what its initCode deploys
 * are refused with `unknownAccount`, while real SimpleAccounts are sponsored and execute through the attacker's own
 * bundler (beneficiary itself), the deposit paying exactly the op's actualGasCost. One chain for the file.
 */

const simpleAccountV06 = parseAbi(['function execute(address dest, uint256 value, bytes func)']);

let app: RpcFixture;
let fx: PatronFixture;
let token: Address;
let factoryV09: Address;
const recipient = privateKeyToAccount(testKey('known-accounts-recipient')).address;

before(async () => {
  app = await startRpcFixture({
    // An operator's own factory (PATRON_CHAINS[i].accounts): SimpleAccount 0.9.0-rc.1's, for EntryPoint v0.9.
    accounts: async (f) => {
      const { abi, bytecode } = loadAccountAbstractionArtifact('0.9', 'SimpleAccountFactory');
      const hash = await f.client.deployContract({ abi, bytecode, args: [f.entryPoints['0.9']] });
      const address = (await waitForSuccess(f.client, hash, 'SimpleAccountFactory v0.9')).contractAddress;
      assert.ok(address);
      factoryV09 = getAddress(address);
      const implementation = await f.client.readContract({
        address: factoryV09,
        abi: parseAbi(['function accountImplementation() view returns (address)']),
        functionName: 'accountImplementation',
      });
      return { simpleAccountV08: { factories: [factoryV09], implementations: [implementation] } };
    },
  });
  fx = app.fx;
  token = fx.tokens[0]?.address ?? '0x';
});
after(() => app.close());

/** A dApp whose only policy allows `transfer` on the token, deployment sponsored or not. */
async function dappAllowingTransfer(sponsorDeployment: boolean): Promise<Tenant> {
  const tenant = await createTenant(app.ctx.deps);
  await app.ctx.deps.policies.create({
    dappId: tenant.dappId,
    name: 'transfers only',
    rules: { contracts: [{ address: token, selectors: ['0xa9059cbb'] }], sponsorDeployment },
  });
  return tenant;
}

const transfer = (amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, amount] });
const executeTransfer = (amount: bigint) =>
  encodeFunctionData({ abi: simpleAccountV06, functionName: 'execute', args: [token, 0n, transfer(amount)] });

/** A fresh address holding the attacker's code (hardhat_setCode: what a factory of its own would deploy). */
async function burner(label: string): Promise<Address> {
  const address = privateKeyToAccount(testKey(`burner-${label}`)).address;
  await fx.client.setCode({ address, bytecode: BURNER_CODE });
  return address;
}

const dataOf = (body: { error?: { data?: unknown } }) => (body.error?.data ?? {}) as Record<string, unknown>;

function assertUnknownAccount(
  r: { status: number; body: { error?: { code: number; message: string; data?: unknown } } },
  sender: Address,
) {
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error?.code, -32012);
  const data = dataOf(r.body);
  assert.equal(data.rule, 'unknownAccount');
  assert.equal(data.sender, getAddress(sender));
  assert.match(r.body.error?.message ?? '', /is not an account Patron knows/);
  return data;
}

describe('EntryPoint v0.6 (pm_sponsorUserOperation)', () => {
  const sponsor = (tenant: Tenant, op: UserOperationV06) =>
    app.rpc('pm_sponsorUserOperation', [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false }], {
      apiKey: tenant.apiKey,
    });
  const plainOp = (sender: Address, nonce: bigint): UserOperationV06 => ({
    sender,
    nonce,
    initCode: '0x',
    callData: executeTransfer(1n),
    callGasLimit: 300_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: '0x',
    signature: '0x',
  });

  test("the attacker's own account code reading execute(token, 0, transfer…) is refused: unknownAccount", async () => {
    const tenant = await dappAllowingTransfer(false);
    const sender = await burner('v06');
    const depositBefore = await paymasterDeposit(fx);
    const r = await sponsor(tenant, plainOp(sender, 0n));
    const data = assertUnknownAccount(r, sender);
    assert.equal(data.codeHash, keccak256(BURNER_CODE));
    // Nothing was signed, so the attacker's bundler has nothing to include: the deposit is untouched.
    assert.equal(await paymasterDeposit(fx), depositBefore);
    // What a signature would have bought (signed here with the service's key, as Patron did before): the op is
    // included, its call burns the gas, the token never moves, and the deposit pays the attacker's bundler.
    const { validUntil, validAfter } = { validUntil: Math.floor(Date.now() / 1000) + 600, validAfter: 0 };
    const signed = await signPaymaster(fx, plainOp(sender, 0n), { validUntil, validAfter });
    const received = await tokenBalance(fx, token, recipient);
    const { events } = await submitHandleOps(fx, [signed]);
    assert.equal(events[0]?.args.success, false, 'the call burnt its gas');
    assert.ok((events[0]?.args.actualGasCost ?? 0n) > 300_000n * 1_000_000_000n, 'all of callGasLimit, paid');
    assert.equal(depositBefore - (await paymasterDeposit(fx)), events[0]?.args.actualGasCost);
    assert.equal(await tokenBalance(fx, token, recipient), received, 'no transfer happened');
  });

  test('the same op from a real SimpleAccount is sponsored and executes through the attacker’s bundler', async () => {
    const tenant = await dappAllowingTransfer(false);
    const owner = privateKeyToAccount(KEYS.accountOwner).address;
    const args = [owner, 7001n] as const;
    const sender = await fx.client.readContract({
      address: fx.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args,
    });
    const deploy = await fx.bundler.writeContract({
      address: fx.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'createAccount',
      args,
    });
    await waitForSuccess(fx.client, deploy, 'SimpleAccount v0.6');
    await mintToken(fx, token, sender, 10n);
    const nonce = await fx.client.readContract({
      address: fx.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'getNonce',
      args: [sender, 0n],
    });
    const op = plainOp(sender, nonce);
    const r = await sponsor(tenant, op);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const signed = await signAccount(fx, { ...op, paymasterAndData: r.body.result?.paymasterAndData as Hex });
    const depositBefore = await paymasterDeposit(fx);
    const received = await tokenBalance(fx, token, recipient);
    const { events } = await submitHandleOps(fx, [signed]);
    assert.equal(events[0]?.args.success, true);
    assert.equal(depositBefore - (await paymasterDeposit(fx)), events[0]?.args.actualGasCost);
    assert.equal((await tokenBalance(fx, token, recipient)) - received, 1n, 'the transfer the policy allows');
  });

  test("an undeployed sender whose initCode names the attacker's factory is refused; the known factory's is sponsored", async () => {
    const tenant = await dappAllowingTransfer(true);
    const known = await buildDeployingOp(fx, 7002n);
    const factory = await burner('v06-factory');
    const unknown = { ...known, initCode: concat([factory, known.initCode.slice(42) as Hex]) };
    const data = assertUnknownAccount(
      await sponsor(tenant, { ...unknown, callData: executeTransfer(1n) }),
      known.sender,
    );
    assert.equal(data.factory, factory);
    await mintToken(fx, token, known.sender, 10n);
    const op = { ...known, callData: executeTransfer(2n), callGasLimit: 300_000n };
    const r = await sponsor(tenant, op);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const signed = await signAccount(fx, { ...op, paymasterAndData: r.body.result?.paymasterAndData as Hex });
    const received = await tokenBalance(fx, token, recipient);
    const { events } = await submitHandleOps(fx, [signed]);
    assert.equal(events[0]?.args.success, true);
    assert.equal((await tokenBalance(fx, token, recipient)) - received, 2n);
  });
});

describe('EntryPoint v0.7 (ERC-7677 pm_getPaymasterData)', () => {
  const entryPoint = () => fx.entryPoints['0.7'];
  const paymasterData = (tenant: Tenant, op: Record<string, unknown>) =>
    rpcV2({ ...app, tenant }, 'pm_getPaymasterData', [hexWire(op), entryPoint(), toHex(fx.chain.chainId), {}]);
  const gas = { callGasLimit: 300_000n, verificationGasLimit: 150_000n, preVerificationGas: 52_000n };
  const fees = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const deposit = () =>
    fx.client.readContract({
      address: entryPoint(),
      abi: entryPoint07Abi,
      functionName: 'balanceOf',
      args: [fx.paymasters['0.7']],
    });

  test("the attacker's own account code is refused: unknownAccount with its code hash", async () => {
    const tenant = await dappAllowingTransfer(false);
    const sender = await burner('v07');
    const r = await paymasterData(tenant, {
      sender,
      nonce: 0n,
      callData: executeTransfer(1n),
      ...gas,
      ...fees,
      signature: '0x',
    });
    assert.equal(assertUnknownAccount(r, sender).codeHash, keccak256(BURNER_CODE));
  });

  test("a SimpleAccount proxy's code pointed at the attacker's implementation is refused", async () => {
    const tenant = await dappAllowingTransfer(false);
    // A real v0.7 SimpleAccount's proxy code, copied to an address of the attacker's, its ERC-1967 slot set to the
    // burner: the proxy is one Patron knows, the implementation it runs is not.
    const owner = privateKeyToAccount(testKey('v07-proxy-owner')).address;
    const factoryV07 = fx.simpleAccountFactories['0.7'];
    const real = await fx.client.readContract({
      address: factoryV07,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args: [owner, 1n],
    });
    await waitForSuccess(
      fx.client,
      await fx.bundler.writeContract({
        address: factoryV07,
        abi: simpleAccountFactoryAbi,
        functionName: 'createAccount',
        args: [owner, 1n],
      }),
      'SimpleAccount v0.7',
    );
    const proxyCode = await fx.client.getCode({ address: real });
    assert.ok(proxyCode);
    assert.equal(keccak256(proxyCode), SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']);
    const implementation = await burner('v07-implementation');
    const sender = privateKeyToAccount(testKey('v07-fake-proxy')).address;
    await fx.client.setCode({ address: sender, bytecode: proxyCode });
    await fx.client.setStorageAt({ address: sender, index: ERC1967_IMPLEMENTATION_SLOT, value: pad(implementation) });
    const r = await paymasterData(tenant, {
      sender,
      nonce: 0n,
      callData: executeTransfer(1n),
      ...gas,
      ...fees,
      signature: '0x',
    });
    const data = assertUnknownAccount(r, sender);
    assert.equal(data.implementation, implementation);
    assert.equal(data.codeHash, SIMPLE_ACCOUNT_PROXY_CODE_HASHES['0.7']);
  });

  test('a real SimpleAccount v0.7 calling the allowed contract is sponsored and executes (attacker as bundler)', async () => {
    const tenant = await dappAllowingTransfer(false);
    const account = await toSimpleSmartAccount({
      client: sdkClientOf(fx),
      owner: privateKeyToAccount(testKey('v07-real-owner')),
      index: 3n,
      entryPoint: { address: entryPoint(), version: '0.7' },
    });
    const { factory, factoryData } = await account.getFactoryArgs();
    assert.ok(factory && factoryData);
    await waitForSuccess(
      fx.client,
      await fx.bundler.sendTransaction({ to: factory, data: factoryData }),
      'SimpleAccount v0.7 deployment',
    );
    await mintToken(fx, token, account.address, 10n);
    const op = {
      sender: account.address,
      nonce: await account.getNonce(),
      callData: await account.encodeCalls([{ to: token, value: 0n, data: transfer(3n) }]),
      ...gas,
      ...fees,
      signature: '0x' as Hex,
    };
    const r = await paymasterData(tenant, op);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const res = r.body.result ?? {};
    const withPaymaster: UserOperation<'0.7'> = {
      ...op,
      paymaster: res.paymaster as Address,
      paymasterData: res.paymasterData as Hex,
      paymasterVerificationGasLimit: BigInt(String(res.paymasterVerificationGasLimit)),
      paymasterPostOpGasLimit: BigInt(String(res.paymasterPostOpGasLimit)),
    };
    const signed = {
      ...withPaymaster,
      signature: await account.signUserOperation({ ...withPaymaster, chainId: fx.chain.chainId }),
    };
    const before = await deposit();
    const received = await tokenBalance(fx, token, recipient);
    const hash = await fx.bundler.writeContract({
      address: entryPoint(),
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: [[toPackedUserOperation(signed)], fx.bundler.account.address],
      gas: 3_000_000n,
    });
    const receipt = await waitForSuccess(fx.client, hash, 'handleOps v0.7');
    const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
    assert.equal(before - (await deposit()), event?.args.actualGasCost);
    assert.equal((await tokenBalance(fx, token, recipient)) - received, 3n);
  });
});

describe('EntryPoint v0.9: initCode is ignored once the sender has code', () => {
  test('an undeployed sender that is not the address its (known) factory deploys is refused; the real one is not', async () => {
    const tenant = await dappAllowingTransfer(true);
    const owner = privateKeyToAccount(testKey('v09-owner')).address;
    const initCode = concat([
      factoryV09,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: 'createAccount', args: [owner, 0n] }),
    ]);
    // The attacker's EOA: Patron sees no code and a known factory, but on v0.9 the EOA could delegate to its own
    // code before inclusion, and the EntryPoint would skip the factory and run that.
    const attacker = privateKeyToAccount(testKey('v09-attacker')).address;
    const op = (sender: Address) =>
      hexWire({
        sender,
        nonce: 0n,
        factory: factoryV09,
        factoryData: `0x${initCode.slice(42)}`,
        callData: executeTransfer(1n),
        callGasLimit: 300_000n,
        verificationGasLimit: 400_000n,
        preVerificationGas: 52_000n,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        signature: '0x',
      });
    const ask = (sender: Address) =>
      rpcV2({ ...app, tenant }, 'pm_getPaymasterData', [
        op(sender),
        fx.entryPoints['0.9'],
        toHex(fx.chain.chainId),
        {},
      ]);
    const r = await ask(attacker);
    const data = assertUnknownAccount(r, attacker);
    assert.equal(data.factory, factoryV09);
    assert.match(r.body.error?.message ?? '', /not the address its initCode deploys/);
    const real = await fx.client.readContract({
      address: factoryV09,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args: [owner, 0n],
    });
    const ok = await ask(real);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});
