import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, encodeFunctionData, erc20Abi, type Hex, hexToBytes, pad, parseEventLogs } from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { signerPositionSlot } from '../src/paymaster/entryPoints/signerSetSlot.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { createPaymasterSigner, type PaymasterSigner } from '../src/paymaster/signer/paymasterSigner.js';
import { createSimulationSigner, SIMULATION_SIGNER_RECHECK_MS } from '../src/paymaster/token/simulationSigner.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  fixtureChainRuntime,
  KEYS,
  mintToken,
  signAccount,
  simpleAccountAbi,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { hexWire, newSimpleAccountOp, quantity, rpcV2 } from './helpers/rpcV07.js';

/**
 * A device signer (a PKCS#11 token, AWS KMS: a call, a quota and a price per signature) is asked once per op, in
 * the token mode as in the sponsored mode. The fixture's signer key behind a wrapper that counts its calls and
 * answers later, as a device does; the real paymaster URL on the in-process chain; every op then executed by
 * handleOps on the EntryPoint, so the one signature is the one the paymaster checks.
 */
const crypto = selectCryptoBackend().backend;
let app: RpcFixture;
let usdc: DevTokenInfo;
let signatures = 0;

function countingSigner(inner: PaymasterSigner): PaymasterSigner {
  return {
    address: inner.address,
    backend: inner.backend,
    sign(digest) {
      signatures++;
      return Promise.resolve(inner.sign(digest));
    },
    close: () => inner.close(),
  };
}

before(async () => {
  const signer = countingSigner(createPaymasterSigner({ privateKey: hexToBytes(KEYS.signer), crypto }));
  app = await startRpcFixture({ tokens: true, tokenGuarantees: true, signer });
  [usdc] = app.fx.tokens as [DevTokenInfo];
});
after(() => app.close());

/** The device's signatures while `run` runs. */
async function signaturesDuring<T>(run: () => Promise<T>): Promise<{ result: T; count: number }> {
  const start = signatures;
  const result = await run();
  return { result, count: signatures - start };
}

const v06Result = (op: UserOperationV06, r: Record<string, unknown>): UserOperationV06 => ({
  ...op,
  paymasterAndData: r.paymasterAndData as Hex,
  callGasLimit: BigInt(r.callGasLimit as number),
  verificationGasLimit: BigInt(r.verificationGasLimit as number),
  preVerificationGas: BigInt(r.preVerificationGas as string),
});

describe('EntryPoint v0.6 (/api/v1)', () => {
  test('token mode: the quote signs nothing, the final data one signature, and handleOps charges the op', async () => {
    const plain = await buildDeployingOp(app.fx, 7_001n);
    const quoted = await signaturesDuring(() =>
      app.rpc('pm_getFeeQuoteOrData', [
        biconomyWireOp(plain, false),
        { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { preferredToken: usdc.address } },
      ]),
    );
    assert.equal(quoted.count, 0, 'a quote is not signed');
    const [quote] = (quoted.result.body.result?.feeQuotes ?? []) as { maxGasFee: number; decimal: number }[];
    assert.ok(quote !== undefined, JSON.stringify(quoted.result.body));
    // As @biconomy/account: approve the quote's maxGasFee, batched before the call (mode 2, the dApp's guarantee).
    const approved = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [app.fx.paymaster, approved] });
    const callData = encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'executeBatch',
      args: [
        [usdc.address, COUNTER_ADDRESS],
        [approve, '0x'],
      ],
    });
    const op = { ...plain, callData };
    await mintToken(app.fx, usdc.address, op.sender, approved * 2n);
    const final = await signaturesDuring(() =>
      app.rpc('pm_sponsorUserOperation', [
        biconomyWireOp(op, false),
        { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } },
      ]),
    );
    assert.equal(final.result.status, 200, JSON.stringify(final.result.body));
    assert.equal(final.count, 1, 'one device signature for the op (its simulation signs with a key of its own)');
    const { receipt, events } = await submitHandleOps(app.fx, [
      await signAccount(app.fx, v06Result(op, final.result.body.result ?? {})),
    ]);
    assert.equal(events[0]?.args.success, true);
    assert.equal(parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs }).length, 1);
  });

  test('sponsored mode: one signature, and handleOps accepts it', async () => {
    const op = await buildDeployingOp(app.fx, 7_002n);
    const { result, count } = await signaturesDuring(() =>
      app.rpc('pm_sponsorUserOperation', [biconomyWireOp(op, false), { mode: 'SPONSORED', calculateGasLimits: true }]),
    );
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(count, 1);
    const { events } = await submitHandleOps(app.fx, [
      await signAccount(app.fx, v06Result(op, result.body.result ?? {})),
    ]);
    assert.equal(events[0]?.args.success, true);
  });
});

describe('EntryPoint v0.7 (/api/v2, ERC-7677)', () => {
  const chainHex = () => `0x${app.fx.chain.chainId.toString(16)}`;
  const zeroGas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };

  async function execute(
    account: Awaited<ReturnType<typeof newSimpleAccountOp>>['account'],
    op: UserOperation<'0.7'>,
  ): Promise<readonly unknown[]> {
    const signed = { ...op, signature: await account.signUserOperation({ ...op, chainId: app.fx.chain.chainId }) };
    const hash = await app.fx.bundler.writeContract({
      address: app.fx.entryPoints['0.7'],
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: [[toPackedUserOperation(signed)], app.fx.bundler.account.address],
      gas: 5_000_000n,
    });
    const receipt = await app.fx.client.waitForTransactionReceipt({ hash });
    const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
    return parseEventLogs({ abi: patronPaymasterAbi, eventName: 'TokenCharged', logs: receipt.logs });
  }

  const paymasterFields = (d: Record<string, unknown>) => ({
    callGasLimit: quantity(d.callGasLimit),
    verificationGasLimit: quantity(d.verificationGasLimit),
    preVerificationGas: quantity(d.preVerificationGas),
    paymaster: d.paymaster as Address,
    paymasterVerificationGasLimit: quantity(d.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: quantity(d.paymasterPostOpGasLimit),
    paymasterData: d.paymasterData as Hex,
  });

  test('token mode: the stub signs nothing, pm_getPaymasterData one signature, and handleOps charges the op', async () => {
    const paymaster = app.fx.paymasters['0.7'];
    const first = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    await mintToken(app.fx, usdc.address, first.op.sender, 1_000_000_000n);
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [paymaster, 20_000_000n] });
    const callData = await first.account.encodeCalls([
      { to: usdc.address, data: approve },
      { to: COUNTER_ADDRESS, data: '0x01' },
    ]);
    const op = { ...first.op, callData };
    // abstractjs's context: the limits computed by Patron, which signs caps for the bundler's estimate after it.
    const ctx = { mode: 'ERC20', calculateGasLimits: true, tokenInfo: { feeTokenAddress: usdc.address } };
    const params = [hexWire({ ...op, ...zeroGas }), app.fx.entryPoints['0.7'], chainHex(), ctx];
    const stub = await signaturesDuring(() => rpcV2(app, 'pm_getPaymasterStubData', params));
    assert.equal(stub.result.status, 200, JSON.stringify(stub.result.body));
    assert.equal(stub.count, 0, 'a stub carries a dummy signature');
    const data = await signaturesDuring(() => rpcV2(app, 'pm_getPaymasterData', params));
    assert.equal(data.result.status, 200, JSON.stringify(data.result.body));
    assert.equal(data.count, 1, 'one device signature for the op (its simulation signs with a key of its own)');
    const charged = await execute(first.account, {
      ...op,
      ...paymasterFields(data.result.body.result ?? {}),
    } as UserOperation<'0.7'>);
    assert.equal(charged.length, 1);
  });

  test('sponsored mode: the stub signs nothing, the data over the final gas one signature, handleOps accepts it', async () => {
    const { account, op } = await newSimpleAccountOp(app.fx, '0.7', [{ to: COUNTER_ADDRESS, data: '0x01' }]);
    const entryPoint = app.fx.entryPoints['0.7'];
    const stub = await signaturesDuring(() =>
      rpcV2(app, 'pm_getPaymasterStubData', [hexWire({ ...op, ...zeroGas }), entryPoint, chainHex(), {}]),
    );
    assert.equal(stub.result.status, 200, JSON.stringify(stub.result.body));
    assert.equal(stub.count, 0);
    // The wallet's estimate (generous fixed limits, as test/paymasterRpc.v07.test.ts), then the data over them.
    const s = stub.result.body.result ?? {};
    const withPaymaster = {
      ...op,
      callGasLimit: 200_000n,
      verificationGasLimit: 400_000n,
      preVerificationGas: 55_000n,
      paymaster: s.paymaster as Address,
      paymasterVerificationGasLimit: quantity(s.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: quantity(s.paymasterPostOpGasLimit),
    };
    const data = await signaturesDuring(() =>
      rpcV2(app, 'pm_getPaymasterData', [
        hexWire({ ...withPaymaster, paymasterData: s.paymasterData }),
        entryPoint,
        chainHex(),
        {},
      ]),
    );
    assert.equal(data.result.status, 200, JSON.stringify(data.result.body));
    assert.equal(data.count, 1);
    const paymasterData = data.result.body.result?.paymasterData as Hex;
    await execute(account, { ...withPaymaster, paymasterData } as UserOperation<'0.7'>);
  });
});

describe('the simulation key (src/paymaster/token/simulationSigner.ts)', () => {
  const keccak = (data: Uint8Array) => crypto.keccak256(data);
  const chainOf = (paymaster: Address, request?: ChainRuntime['request']): ChainRuntime => ({
    ...fixtureChainRuntime(app.fx),
    paymaster,
    ...(request === undefined ? {} : { request }),
  });
  const isSigner = (paymaster: Address, who: Address) =>
    app.fx.client.readContract({ address: paymaster, abi: patronPaymasterAbi, functionName: 'isSigner', args: [who] });

  test('both paymasters keep their signer at the computed slot, and accept the key under the override only', async () => {
    const simulation = createSimulationSigner({ crypto, now: Date.now });
    const { address: signer } = createPaymasterSigner({ privateKey: hexToBytes(KEYS.signer), crypto });
    for (const paymaster of [app.fx.paymaster, app.fx.paymasters['0.7']]) {
      const stored = await app.fx.client.getStorageAt({
        address: paymaster,
        slot: signerPositionSlot({ signer, keccak }),
      });
      assert.notEqual(BigInt(stored ?? '0x0'), 0n, `${paymaster} records its signer at the computed slot`);
      // forChain asks the paymaster's isSigner under the override: defined means it answered true.
      const signing = await simulation.forChain(chainOf(paymaster));
      assert.ok(signing !== undefined, `${paymaster} accepts the simulation key under the override`);
      assert.equal(await isSigner(paymaster, simulation.address), false, 'and only there');
      const probeSlot = pad('0x02', { size: 32 });
      const diff = signing.stateDiff({ [paymaster]: { [probeSlot]: pad('0x01', { size: 32 }) } });
      assert.deepEqual(Object.keys(diff[paymaster] ?? {}).sort(), [probeSlot, simulationSlot(simulation)].sort());
    }
  });

  test('where the override is not seen, simulations are signed by the signer (logged), asked again a minute on', async () => {
    let clock = 1_000_000;
    const warnings: string[] = [];
    const simulation = createSimulationSigner({
      crypto,
      now: () => clock,
      logger: { warn: (_obj, msg) => warnings.push(msg) },
    });
    // A node that drops eth_call's state overrides (its third parameter), until it is fixed.
    let dropsOverrides = true;
    const own = fixtureChainRuntime(app.fx);
    const request: ChainRuntime['request'] = (args) =>
      own.request(
        dropsOverrides && args.method === 'eth_call' ? { ...args, params: args.params?.slice(0, 2) ?? [] } : args,
      );
    const chain = chainOf(app.fx.paymaster, request);
    assert.equal(await simulation.forChain(chain), undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /does not accept the simulation key under a state override/);
    // A contract without a signer set (here the fee token, as a paymaster from before signer sets would be).
    assert.equal(await simulation.forChain(chainOf(usdc.address)), undefined);
    dropsOverrides = false;
    clock += SIMULATION_SIGNER_RECHECK_MS - 1;
    assert.equal(await simulation.forChain(chain), undefined, 'the "no" holds a minute');
    clock += 1;
    assert.ok((await simulation.forChain(chain)) !== undefined, 'then the paymaster is asked again');
    assert.equal(warnings.length, 2);
  });
});

/** The one slot the simulation key adds to a paymaster's state diff. */
function simulationSlot(simulation: { readonly address: Address }): Hex {
  return signerPositionSlot({ signer: simulation.address, keccak: (data) => crypto.keccak256(data) });
}
