import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { toSafeSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  concat,
  createPublicClient,
  custom,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  isErc6492Signature,
  maxUint256,
  pad,
  parseAbi,
  parseEventLogs,
  toHex,
} from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { MODE_TOKEN } from '../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { COUNTER_ADDRESS, counterValue, mintToken, testKey, tokenBalance } from './helpers/patronPaymasterV06.js';
import { type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity, rpcV2 } from './helpers/rpcV07.js';
import { enableTokenGuarantees } from './helpers/testContext.js';

/**
 * The token mode's permit through Patron's ERC-7677 methods (/api/v2, EntryPoint v0.7): the stub tells a
 * first-time account (a Safe 1.4.1 that does not exist yet and never approved anything) what to sign, the account
 * signs it as its SDK does (ERC-6492 while undeployed), the data call carries it in the context, and the op Patron
 * signs (mode 3) executes with handleOps: the permit executed, the maximum prefunded, the rest refunded. Then the
 * refusals, each before anything is signed: a permit below the maximum, one the token refuses (another key, another
 * spender), a token without a permit, EntryPoint v0.6, a paymaster deployed before the permit mode, a malformed one.
 */
let app: RpcFixture;
let usdc: DevTokenInfo;
let pdt: DevTokenInfo;
before(async () => {
  app = await startRpcFixture({ tokens: true });
  [usdc, pdt] = app.fx.tokens as [DevTokenInfo, DevTokenInfo];
});
after(() => app.close());

const entryPoint = () => app.fx.entryPoints['0.7'];
const paymaster = () => app.fx.paymasters['0.7'];
const chainIdHex = () => toHex(app.fx.chain.chainId);

let label = 0;
/** A fresh Safe 1.4.1 (permissionless's default for EntryPoint v0.7), undeployed, holding 100 USDC. */
async function freshSafe() {
  const account = await toSafeSmartAccount({
    client: createPublicClient({ chain: app.fx.client.chain, transport: custom(app.fx.chain) }),
    owners: [privateKeyToAccount(testKey(`rpc-permit-safe-${label++}`))],
    version: '1.4.1',
    entryPoint: { address: entryPoint(), version: '0.7' },
  });
  await mintToken(app.fx, usdc.address, account.address, 100_000_000n);
  const { factory, factoryData } = await account.getFactoryArgs();
  const block = await app.fx.client.getBlock();
  const op = {
    sender: account.address,
    nonce: await account.getNonce(),
    factory,
    factoryData,
    callData: await account.encodeCalls([{ to: COUNTER_ADDRESS, data: '0x01' }]),
    maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + 1_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    signature: await account.getStubSignature(),
  };
  return { account, op };
}

type Safe = Awaited<ReturnType<typeof freshSafe>>['account'];

const stub = (op: Record<string, unknown>, context: Record<string, unknown>) =>
  rpcV2(app, 'pm_getPaymasterStubData', [hexWire(op), entryPoint(), chainIdHex(), context]);
const data = (op: Record<string, unknown>, context: Record<string, unknown>) =>
  rpcV2(app, 'pm_getPaymasterData', [hexWire(op), entryPoint(), chainIdHex(), context]);

interface PermitTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: Record<string, { name: string; type: string }[]>;
  primaryType: 'Permit';
  message: { owner: Address; spender: Address; value: string; nonce: string; deadline: string };
}

/** The stub's permitTypedData, as JSON; and its typed form for viem's signTypedData. */
async function askPermit(op: Record<string, unknown>) {
  const r = await stub(op, { token: usdc.address });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const typed = r.body.result?.permitTypedData as PermitTypedData | undefined;
  assert.ok(typed, `the stub asks for a permit: ${JSON.stringify(r.body.result)}`);
  const { EIP712Domain: _, ...types } = typed.types;
  const signable = {
    domain: { ...typed.domain, chainId: BigInt(typed.domain.chainId) },
    types,
    primaryType: typed.primaryType,
    message: {
      ...typed.message,
      value: BigInt(typed.message.value),
      nonce: BigInt(typed.message.nonce),
      deadline: BigInt(typed.message.deadline),
    },
  } as const;
  return { result: r.body.result ?? {}, typed, signable };
}

/** The account signs the typed data as its SDK does (ERC-6492-wrapped while the Safe is undeployed). */
const signWith = (account: Safe, signable: Awaited<ReturnType<typeof askPermit>>['signable']) =>
  account.signTypedData(signable as never);

/** Signs the final op as the Safe and submits it with handleOps (fixed gas, no estimate); returns the receipt. */
async function submit(account: Safe, op: UserOperation<'0.7'>) {
  const signed = { ...op, signature: await account.signUserOperation({ ...op, chainId: app.fx.chain.chainId }) };
  const hash = await app.fx.bundler.writeContract({
    address: entryPoint(),
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(signed)], app.fx.bundler.account.address],
    gas: 5_000_000n,
  });
  return app.fx.client.waitForTransactionReceipt({ hash });
}

/** submit, which must succeed with the op executed. */
async function execute(account: Safe, op: UserOperation<'0.7'>) {
  const receipt = await submit(account, op);
  assert.equal(receipt.status, 'success');
  const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.equal(event?.args.success, true, 'the op executed');
  return receipt;
}

/** The final op from the data answer (calculateGasLimits: Patron's limits, returned with the fields). */
function finalOp(op: Record<string, unknown>, result: Record<string, unknown>): UserOperation<'0.7'> {
  return {
    ...(op as unknown as UserOperation<'0.7'>),
    paymaster: result.paymaster as Address,
    paymasterData: result.paymasterData as Hex,
    paymasterVerificationGasLimit: quantity(result.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: quantity(result.paymasterPostOpGasLimit),
    callGasLimit: quantity(result.callGasLimit),
    verificationGasLimit: quantity(result.verificationGasLimit),
    preVerificationGas: quantity(result.preVerificationGas),
  };
}

const decoded = (result: Record<string, unknown>) => {
  const d = decodePaymasterAndDataV07(concat([paymaster(), pad('0x', { size: 32 }), result.paymasterData as Hex]));
  assert.equal(d.fields.mode, MODE_TOKEN);
  return d.fields.mode === MODE_TOKEN ? d.fields : assert.fail('a token-mode signature');
};

const allowanceOf = (owner: Address, spender: Address = paymaster()) =>
  app.fx.client.readContract({
    address: usdc.address,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [owner, spender],
  });

describe('a first-time account pays in USDC with a permit (ERC-7677 stub, then data, then handleOps)', () => {
  test('the stub asks for the permit; the data call carries it; Patron signs mode 3; the op executes', async (t) => {
    const { account, op } = await freshSafe();
    const { result, typed, signable } = await askPermit(op);
    assert.deepEqual(typed.domain, {
      name: 'USD Coin (Patron dev chain)',
      version: '2',
      chainId: app.fx.chain.chainId,
      verifyingContract: usdc.address,
    });
    assert.equal(typed.primaryType, 'Permit');
    assert.deepEqual(
      { ...typed.message, value: undefined },
      { owner: account.address, spender: paymaster(), value: undefined, nonce: '0', deadline: maxUint256.toString() },
    );
    const value = BigInt(typed.message.value);
    assert.ok(value > 0n);
    // The stub is sized as the permit mode's final data: mode 3, its paymaster gas.
    assert.equal((result.paymasterData as Hex).slice(0, 4), '0x03');
    assert.equal(quantity(result.paymasterVerificationGasLimit), 200_000n);

    const signature = await signWith(account, signable);
    assert.equal(isErc6492Signature(signature), true, 'the undeployed Safe signs in ERC-6492 form');
    const context = {
      token: usdc.address,
      calculateGasLimits: true,
      permit: { value: typed.message.value, signature },
    };
    // The second stub (viem's prepareUserOperation, the permit in the context) asks nothing more.
    const again = await stub(op, context);
    assert.equal(again.body.result?.permitTypedData, undefined);
    const d = await data(op, context);
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const fields = decoded(d.body.result ?? {});
    assert.ok(fields.permit !== undefined, 'mode 3');
    assert.equal(fields.permit.value, value);
    assert.equal(isErc6492Signature(fields.permit.signature), false, 'the paymaster data carries the inner signature');
    assert.ok(fields.maxTokenCost <= value, 'the maximum is within the permit');

    const counter = await counterValue(app.fx);
    const receipt = await execute(account, finalOp(op, d.body.result ?? {}));
    assert.equal(await counterValue(app.fx), counter + 1n);
    const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: receipt.logs, eventName: 'TokenCharged' });
    assert.ok(charged);
    assert.equal(await tokenBalance(app.fx, usdc.address, account.address), 100_000_000n - charged.args.charge);
    assert.equal(
      await allowanceOf(account.address),
      value - fields.maxTokenCost,
      'the permit’s value minus the prefund',
    );
    t.diagnostic(`permit ${value}, maximum ${fields.maxTokenCost}, charged ${charged.args.charge}`);
  });

  test('Pimlico’s pm_sponsorUserOperation takes the permit in its context too', async () => {
    const { account, op } = await freshSafe();
    const { typed, signable } = await askPermit(op);
    const signature = await signWith(account, signable);
    const r = await rpcV2(app, 'pm_sponsorUserOperation', [
      hexWire(op),
      entryPoint(),
      { token: usdc.address, permit: { value: typed.message.value, signature } },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(decoded(r.body.result ?? {}).permit !== undefined, 'mode 3');
    await execute(account, finalOp(op, r.body.result ?? {}));
  });

  test('an op that batches its approval: the stub refuses it while the dApp does not guarantee such ops (the default), a permit pays it; no permit asked once the dApp does', async () => {
    const { account, op } = await freshSafe();
    // The Safe's single call is ABI-encoded (executeUserOp), where Patron and the contract find an approval. That
    // approval runs after validation, so alone it pays only as the dApp's guarantee (mode 2), off by default: the
    // stub says so at once (before the client spends an estimate), naming the permit as a way to pay.
    const batched = {
      ...op,
      callData: await account.encodeCalls([
        {
          to: usdc.address,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [paymaster(), maxUint256] }),
        },
      ]),
    };
    const refused = await stub(batched, { token: usdc.address });
    assert.equal(refused.body.error?.code, -32021, JSON.stringify(refused.body));
    assert.equal((refused.body.error?.data as { rule?: string } | undefined)?.rule, 'guaranteeOff');
    assert.match(refused.body.error?.message ?? '', /pay with a permit/);
    // The permit the stub asks of the same op without its approval, signed for more, pays the batched op: mode 3,
    // its own approval executing after the prefund.
    const { signable } = await askPermit(op);
    const large = { ...signable, message: { ...signable.message, value: 10n ** 12n } };
    const signature = await signWith(account, large);
    const paid = await data(batched, {
      token: usdc.address,
      calculateGasLimits: true,
      permit: { value: '1000000000000', signature },
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const fields = decoded(paid.body.result ?? {});
    assert.ok(fields.permit !== undefined, 'mode 3');
    assert.notEqual(fields.guaranteed, true);
    await execute(account, finalOp(batched, paid.body.result ?? {}));
    assert.equal(await allowanceOf(account.address), maxUint256, 'its own approval ran after the prefund');
    // The dApp that guarantees such ops: no permit asked, the token mode's own stub (mode 2 comes with the data).
    const other = await freshSafe();
    const otherBatched = {
      ...other.op,
      callData: await other.account.encodeCalls([
        {
          to: usdc.address,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [paymaster(), maxUint256] }),
        },
      ]),
    };
    await enableTokenGuarantees(app.ctx.deps, app.tenant);
    try {
      const r = await stub(otherBatched, { token: usdc.address });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.result?.permitTypedData, undefined);
      assert.equal(String(r.body.result?.paymasterData).slice(0, 4), '0x01', 'the token mode’s own stub');
    } finally {
      await app.ctx.deps.accounts.setDappTokenGuarantees({
        accountId: app.tenant.accountId,
        dappId: app.tenant.dappId,
        guarantees: { enabled: false },
      });
    }
  });

  test('no permit is asked of an account whose allowance covers the op', async () => {
    const { account, op } = await freshSafe();
    // A first op with a large permit leaves an allowance that covers the next op: mode 1, no permit asked.
    const { typed, signable } = await askPermit(op);
    const large = { ...signable, message: { ...signable.message, value: 10n ** 12n } };
    const signature = await signWith(account, large);
    const first = await data(op, {
      token: usdc.address,
      calculateGasLimits: true,
      permit: { value: '1000000000000', signature },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await execute(account, finalOp(op, first.body.result ?? {}));
    assert.equal(typed.message.nonce, '0');
    const next = { ...op, factory: undefined, factoryData: undefined, nonce: await account.getNonce() };
    const s = await stub(next, { token: usdc.address });
    assert.equal(s.body.result?.permitTypedData, undefined, 'the allowance covers it');
    const d = await data(next, { token: usdc.address, calculateGasLimits: true });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const fields = decoded(d.body.result ?? {});
    assert.equal(fields.permit, undefined, 'mode 1');
    assert.notEqual(fields.guaranteed, true);
  });
});

describe('permits refused before anything is signed', () => {
  const refused = async (
    context: Record<string, unknown>,
    op?: Record<string, unknown>,
  ): Promise<{ code: number; message: string }> => {
    const r = await data(op ?? (await freshSafe()).op, { calculateGasLimits: true, ...context });
    assert.ok(r.body.error, `refused: ${JSON.stringify(r.body.result)}`);
    assert.equal(r.body.result, undefined);
    return r.body.error;
  };

  test('a permit below the maximum charge: -32021 naming both', async () => {
    const { account, op } = await freshSafe();
    const { signable } = await askPermit(op);
    const signature = await signWith(account, { ...signable, message: { ...signable.message, value: 1n } });
    const e = await refused({ token: usdc.address, permit: { value: '1', signature } }, op);
    assert.equal(e.code, -32021);
    assert.match(e.message, /USDC permit allows 1 base units, below this operation's maximum charge of \d+/);
  });

  test('a permit the token refuses (another key, another spender, another value): -32021 with the token’s reason', async () => {
    const { account, op } = await freshSafe();
    const { typed, signable } = await askPermit(op);
    const stranger = privateKeyToAccount(testKey('rpc-permit-stranger'));
    const cases: Array<[string, Hex]> = [
      ['another key', await stranger.signTypedData(signable)],
      [
        'another spender',
        await signWith(account, { ...signable, message: { ...signable.message, spender: app.fx.paymasters['0.8'] } }),
      ],
    ];
    for (const [label, signature] of cases) {
      const e = await refused({ token: usdc.address, permit: { value: typed.message.value, signature } }, op);
      assert.equal(e.code, -32021, label);
      assert.match(e.message, /USDC permit was refused by the token \(EIP2612: invalid signature\)/, label);
      assert.match(e.message, new RegExp(`owner ${account.address}, spender ${paymaster()}`), label);
    }
    const signature = await signWith(account, signable);
    const bumped = (BigInt(typed.message.value) + 1n).toString();
    const e = await refused({ token: usdc.address, permit: { value: bumped, signature } }, op);
    assert.equal(e.code, -32021, 'a value the signature is not for');
    assert.equal(await allowanceOf(account.address), 0n, 'nothing happened on chain');
  });

  test('a token without a permit, and EntryPoint v0.6: -32030 saying what to do instead', async () => {
    const { account, op } = await freshSafe();
    const { typed, signable } = await askPermit(op);
    const permit = { value: typed.message.value, signature: await signWith(account, signable) };
    const plain = await refused({ token: pdt.address, permit }, op);
    assert.equal(plain.code, -32030);
    assert.match(plain.message, /PDT .* is not configured with a permit Patron can execute; approve the paymaster/);
    const r = await rpcV2(app, 'pm_getPaymasterStubData', [
      hexWire({ ...op, initCode: '0x', factory: undefined, factoryData: undefined }),
      app.fx.entryPoints['0.6'],
      chainIdHex(),
      { token: usdc.address, permit },
    ]);
    assert.equal(r.body.error?.code, -32030, JSON.stringify(r.body));
    assert.match(r.body.error?.message ?? '', /served on EntryPoint v0.7 and later/);
  });

  test('malformed permits: -32602 naming the field', async () => {
    const { op } = await freshSafe();
    const cases: Array<[unknown, RegExp]> = [
      [{ value: '12' }, /params\[3\]\.permit\.signature/],
      [{ value: 'twelve', signature: '0x01' }, /params\[3\]\.permit\.value: must be a hex or decimal quantity/],
      [{ value: '12', signature: '0x0g' }, /params\[3\]\.permit\.signature: must be 0x-prefixed hex/],
      [
        { value: '12', signature: `0x${'11'.repeat(2049)}` },
        /params\[3\]\.permit\.signature: must be at most 2048 bytes/,
      ],
      ['0x1234', /params\[3\]\.permit: must be an object \{ value, signature \}/],
    ];
    for (const [permit, message] of cases) {
      const e = await refused({ token: usdc.address, permit }, op);
      assert.equal(e.code, -32602, JSON.stringify(permit));
      assert.match(e.message, message);
    }
    const sponsored = await data(op, { permit: { value: '1', signature: '0x01' } });
    assert.equal(sponsored.body.error?.code, -32602);
    assert.match(sponsored.body.error?.message ?? '', /params\[3\]\.permit: is a permit to pay gas in a token/);
  });

  test('attack: an account that spends its permit after Patron signed: its op fails validation (AA33) and the deposit pays nothing', async () => {
    const { account, op } = await freshSafe();
    // Deployed first (anyone may call the factory), so the op carries no initCode and the account signs plainly.
    const factoryHash = await app.fx.stranger.sendTransaction({
      to: op.factory as Address,
      data: op.factoryData as Hex,
    });
    await app.fx.client.waitForTransactionReceipt({ hash: factoryHash });
    const deployed = { ...op, factory: undefined, factoryData: undefined };
    const { typed, signable } = await askPermit(deployed);
    const signature = await signWith(account, signable);
    const d = await data(deployed, {
      token: usdc.address,
      calculateGasLimits: true,
      permit: { value: typed.message.value, signature },
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.ok(decoded(d.body.result ?? {}).permit, 'a mode-3 signature in hand');
    // The account then spends its permit's nonce on another permit, of 0, submitted straight to the token.
    const zero = await signWith(account, { ...signable, message: { ...signable.message, value: 0n } });
    const spent = await app.fx.stranger.writeContract({
      address: usdc.address,
      abi: parseAbi(['function permit(address, address, uint256, uint256, bytes)']),
      functionName: 'permit',
      args: [account.address, paymaster(), 0n, maxUint256, zero],
    });
    assert.equal((await app.fx.client.waitForTransactionReceipt({ hash: spent })).status, 'success');
    // Its own bundler submits the op Patron signed: validation fails, the bundle reverts, nothing is paid.
    const op3 = finalOp(deployed, d.body.result ?? {});
    const signed = { ...op3, signature: await account.signUserOperation({ ...op3, chainId: app.fx.chain.chainId }) };
    const deposit = () =>
      app.fx.client.readContract({
        address: entryPoint(),
        abi: entryPoint07Abi,
        functionName: 'balanceOf',
        args: [paymaster()],
      });
    const depositBefore = await deposit();
    const simulated = await app.fx.client
      .simulateContract({
        account: app.fx.bundler.account,
        address: entryPoint(),
        abi: entryPoint07Abi,
        functionName: 'handleOps',
        args: [[toPackedUserOperation(signed)], app.fx.bundler.account.address],
      })
      .then(
        () => 'included',
        (err: unknown) => String(err),
      );
    assert.match(simulated, /AA33 reverted/, 'a bundler drops it');
    assert.equal((await submit(account, op3)).status, 'reverted');
    assert.equal(await deposit(), depositBefore, 'the deposit paid nothing');
    assert.equal(await tokenBalance(app.fx, usdc.address, account.address), 100_000_000n);
  });

  // Last: it leaves the v0.8 deployment looking old to this app (the answer is kept per deployment).
  test('a paymaster deployed before the permit mode: no permit asked in the stub, -32030 for one carried', async () => {
    const v08 = app.fx.paymasters['0.8'];
    const code = await app.fx.client.getCode({ address: v08 });
    assert.ok(code);
    await app.fx.client.setCode({ address: v08, bytecode: oldPaymasterCode() });
    try {
      const fresh = await newSimpleAccountOp(app.fx, '0.8', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
      await mintToken(app.fx, usdc.address, fresh.op.sender, 100_000_000n);
      const s = await rpcV2(app, 'pm_getPaymasterStubData', [
        hexWire(fresh.op),
        app.fx.entryPoints['0.8'],
        chainIdHex(),
        { token: usdc.address },
      ]);
      assert.equal(s.status, 200, JSON.stringify(s.body));
      assert.equal(s.body.result?.permitTypedData, undefined, 'no permit asked for a paymaster that cannot take it');
      assert.equal(String(s.body.result?.paymasterData).slice(0, 4), '0x01');
      const owner = privateKeyToAccount(testKey('rpc-permit-old'));
      const r = await rpcV2(app, 'pm_getPaymasterData', [
        hexWire({
          sender: owner.address,
          nonce: 0n,
          callData: '0x',
          maxFeePerGas: 3_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
          signature: '0x',
        }),
        app.fx.entryPoints['0.8'],
        chainIdHex(),
        { token: usdc.address, calculateGasLimits: true, permit: { value: '1', signature: '0x01' } },
      ]);
      assert.equal(r.body.error?.code, -32030, JSON.stringify(r.body));
      assert.match(r.body.error?.message ?? '', /was deployed before the permit mode \(it has no MODE_TOKEN_PERMIT\)/);
      assert.match(r.body.error?.message ?? '', /patron paymaster deploy/);
    } finally {
      await app.fx.client.setCode({ address: v08, bytecode: code });
    }
  });
});

/** A contract answering what a paymaster from before the permit mode answers: MODE_TOKEN, no MODE_TOKEN_PERMIT. */
function oldPaymasterCode(): Hex {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const source = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
contract BeforePermit { uint8 public constant MODE_TOKEN = 1; uint8 public constant MODE_TOKEN_GUARANTEED = 2; }`;
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Old.sol': { content: source } },
        settings: { outputSelection: { '*': { '*': ['evm.deployedBytecode.object'] } } },
      }),
    ),
  ) as { contracts: { 'Old.sol': { BeforePermit: { evm: { deployedBytecode: { object: string } } } } } };
  return `0x${output.contracts['Old.sol'].BeforePermit.evm.deployedBytecode.object}`;
}
