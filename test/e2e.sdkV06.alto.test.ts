import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import { prepareUserOperationForErc20Paymaster } from 'permissionless/experimental/pimlico';
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  hexToBigInt,
  http,
  keccak256,
  maxUint256,
  parseEventLogs,
  stringToHex,
} from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { patronPaymasterAbi } from '../src/chain/artifacts.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import { entryPointV06 } from '../src/paymaster/entryPoints/v06/entryPointV06.js';
import { altoPreVerificationGasV06 } from '../src/paymaster/entryPoints/v06/gasEstimatorV06.js';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { opGasBounds, preVerificationGasNeeded } from '../src/paymaster/gasBounds.js';
import { COUNTER_ADDRESS, KEYS, mintToken, tokenBalance } from './helpers/patronPaymasterV06.js';
import { bundlerFees, type SdkE2eV07, startSdkE2eV07 } from './helpers/sdkE2eV07.js';
import { enableTokenGuarantees } from './helpers/testContext.js';

/**
 * EntryPoint v0.6 through permissionless 0.4.1 and alto 0.0.20 (the real bundler, serving v0.6 too), Patron on its
 * /api/v2 URL as the paymaster: the op shapes the SDK makes on v0.6 (sponsored with and without initCode; ERC-20
 * with its approval batched, with and without initCode). For each, alto's own eth_estimateUserOperationGas (the
 * preVerificationGas the SDK then sends) is held against Patron's bound for the op the SDK finally signs
 * (preVerificationGasNeeded × the default multiplier: above it, Patron refuses the op with -32040), and the op is
 * bundled by alto and checked on chain.
 */
let x: SdkE2eV07;
let closeAll: (() => Promise<void>) | undefined;
before(async () => {
  const started = await startSdkE2eV07({ tokens: true, bundleV06: true });
  x = started.e2e;
  closeAll = started.close;
  // The ERC-20 flow batches its approval into the op (mode 2): the dApp guarantees those charges, its choice.
  await enableTokenGuarantees(x.ctx.deps, x.open);
});
after(async () => {
  await closeAll?.();
});

const counterCall = { to: COUNTER_ADDRESS, data: '0x' as Hex };
const receiptPolling = { pollingInterval: 100, timeout: 30_000 } as const;
const ownerFor = (label: string) => privateKeyToAccount(keccak256(stringToHex(`patron-test-sdk-v06-alto-${label}`)));
const entryPoint = () => ({ address: x.fx.entryPoints['0.6'], version: '0.6' as const });

const usdcOf = (): DevTokenInfo => {
  const [usdc] = x.fx.tokens;
  assert.ok(usdc, 'the dev chain has USDC');
  return usdc;
};

async function account(label: string) {
  return toSimpleSmartAccount({ client: x.publicClient, owner: ownerFor(label), entryPoint: entryPoint() });
}

type Account = Awaited<ReturnType<typeof account>>;

function client(smartAccount: Account, mode: 'sponsored' | 'erc20') {
  const patron = createPimlicoClient({ transport: http(x.paymasterUrl(x.open.apiKey)), entryPoint: entryPoint() });
  return createSmartAccountClient({
    account: smartAccount,
    chain: x.chain,
    client: x.publicClient,
    bundlerTransport: http(x.alto.url),
    paymaster: patron,
    ...(mode === 'erc20' ? { paymasterContext: { token: usdcOf().address } } : {}),
    userOperation: {
      ...bundlerFees(x),
      ...(mode === 'erc20' ? { prepareUserOperation: prepareUserOperationForErc20Paymaster(patron) } : {}),
    },
  });
}

interface WireOpV06 {
  sender: Address;
  nonce: Hex;
  initCode: Hex;
  callData: Hex;
  callGasLimit: Hex;
  verificationGasLimit: Hex;
  preVerificationGas: Hex;
  maxFeePerGas: Hex;
  maxPriorityFeePerGas: Hex;
  paymasterAndData: Hex;
  signature: Hex;
}

const fromWire = (op: WireOpV06): UserOperationV06 => ({
  sender: op.sender,
  nonce: hexToBigInt(op.nonce),
  initCode: op.initCode,
  callData: op.callData,
  callGasLimit: hexToBigInt(op.callGasLimit),
  verificationGasLimit: hexToBigInt(op.verificationGasLimit),
  preVerificationGas: hexToBigInt(op.preVerificationGas),
  maxFeePerGas: hexToBigInt(op.maxFeePerGas),
  maxPriorityFeePerGas: hexToBigInt(op.maxPriorityFeePerGas),
  paymasterAndData: op.paymasterAndData,
  signature: op.signature,
});

/** Patron's bound on preVerificationGas for the op as sent (its paymasterAndData signed), at the default bounds. */
function patronBound(op: WireOpV06): { needed: bigint; bound: bigint } {
  const paymaster = getAddress(op.paymasterAndData.slice(0, 42));
  const { paymasterAndData: _, ...rest } = fromWire(op);
  const needed = preVerificationGasNeeded({
    ep: entryPointV06,
    op: { ...rest, paymasterVerificationGasLimit: 0n, paymasterPostOpGasLimit: 0n },
    fields: {
      paymaster,
      paymasterAndData: op.paymasterAndData,
      paymasterData: `0x${op.paymasterAndData.slice(42)}`,
      paymasterVerificationGasLimit: 0n,
      paymasterPostOpGasLimit: 0n,
    },
    l1: undefined,
  });
  const gas = opGasBounds({
    ep: entryPointV06,
    bounds: DEFAULT_SIGNING_BOUNDS,
    preVerificationGasNeeded: needed,
    paymasterPostOpGasLimit: 0n,
  });
  return { needed, bound: gas.maxPreVerificationGasForSize };
}

/** The last alto call of `method` since `from`: its op and its answer. */
function lastAlto(from: number, method: string) {
  const call = x.calls.slice(from).findLast((c) => c.target === 'alto' && c.method === method);
  assert.ok(call, `the SDK called ${method} on alto`);
  return { op: call.params[0] as WireOpV06, result: (call.response as { result?: unknown }).result };
}

/** Sends one op with the SDK; returns alto's estimate, Patron's bound for the op sent, and the mined op's event. */
async function sendThrough(
  smartAccount: Account,
  mode: 'sponsored' | 'erc20',
  calls: readonly { to: Address; data: Hex }[] = [counterCall],
) {
  const from = x.calls.length;
  const hash = await client(smartAccount, mode).sendUserOperation({ calls: [...calls] });
  const estimate = lastAlto(from, 'eth_estimateUserOperationGas');
  const sent = lastAlto(from, 'eth_sendUserOperation').op;
  const altoPreVerificationGas = hexToBigInt((estimate.result as { preVerificationGas: Hex }).preVerificationGas);
  const receipt = await client(smartAccount, mode).waitForUserOperationReceipt({ hash, ...receiptPolling });
  const logs = await x.fx.client.getTransactionReceipt({ hash: receipt.receipt.transactionHash });
  const [event] = parseEventLogs({ abi: entryPoint06Abi, logs: logs.logs, eventName: 'UserOperationEvent' }).filter(
    (e) => e.args.userOpHash === hash,
  );
  assert.ok(event, 'a UserOperationEvent');
  return { estimated: estimate.op, sent, altoPreVerificationGas, ...patronBound(sent), event, logs };
}

describe('permissionless on EntryPoint v0.6 through alto: Patron’s preVerificationGas bound covers alto’s estimate', () => {
  const shapes = [
    { label: 'sponsored, with initCode', mode: 'sponsored', owner: 'sponsored', deployed: false },
    { label: 'sponsored, deployed account', mode: 'sponsored', owner: 'sponsored', deployed: true },
    { label: 'ERC-20 (approval batched), with initCode', mode: 'erc20', owner: 'erc20', deployed: false },
    { label: 'ERC-20 (approval batched), deployed account', mode: 'erc20', owner: 'erc20', deployed: true },
  ] as const;
  for (const shape of shapes) {
    test(`${shape.label}: alto's estimate ≤ Patron's bound, and the op is mined`, async (t) => {
      const smartAccount = await account(shape.owner);
      if (shape.mode === 'erc20' && !shape.deployed) {
        await mintToken(x.fx, usdcOf().address, smartAccount.address, 100_000_000n);
      }
      const usdcBefore = await tokenBalance(x.fx, usdcOf().address, smartAccount.address);
      const r = await sendThrough(smartAccount, shape.mode);
      t.diagnostic(
        `alto estimate ${r.altoPreVerificationGas}, Patron needed ${r.needed}, bound ${r.bound}, sent ${hexToBigInt(r.sent.preVerificationGas)}`,
      );
      assert.equal(r.sent.initCode !== '0x', !shape.deployed, 'initCode as the shape says');
      // alto's estimate is its own rule (Patron's restatement of it) over the op it was asked about, × 1.1.
      assert.equal(r.altoPreVerificationGas, (altoPreVerificationGasV06(fromWire(r.estimated)) * 110n) / 100n);
      assert.ok(r.altoPreVerificationGas <= r.bound, `alto ${r.altoPreVerificationGas} > Patron's bound ${r.bound}`);
      assert.equal(hexToBigInt(r.sent.preVerificationGas), r.altoPreVerificationGas, 'the SDK sent alto’s figure');
      assert.equal(r.event.args.success, true);
      assert.equal(getAddress(r.event.args.paymaster), getAddress(x.fx.paymaster), 'Patron’s v0.6 paymaster paid');
      assert.equal(getAddress(r.logs.from), privateKeyToAccount(KEYS.alto).address, 'alto sent the bundle');
      if (shape.mode === 'erc20') {
        const [charged] = parseEventLogs({ abi: patronPaymasterAbi, logs: r.logs.logs, eventName: 'TokenCharged' });
        assert.ok(charged, 'TokenCharged');
        assert.equal(getAddress(charged.args.token), getAddress(usdcOf().address));
        assert.ok(charged.args.charge > 0n);
        const paid = usdcBefore - (await tokenBalance(x.fx, usdcOf().address, smartAccount.address));
        assert.equal(paid, charged.args.charge, 'the account paid its gas in USDC');
      }
    });
  }
});

/**
 * Known to fail, left for a decision (not a guard): with the allowance in place, permissionless still has the op
 * estimated behind its approve(paymaster, max) and then sends it without: (1) the op it sends is a whole batched call
 * smaller than the one alto priced (alto 57,206 against Patron's bound 54,753 on a deployed SimpleAccount), and (2)
 * alto's verificationGasLimit was measured under the stub's dummy signature, with which PatronPaymaster returns before
 * mode 1's prefund transferFrom, so the signed op fails alto's simulation with AA40. Neither is a matter of the op's
 * size: it needs a token-mode allowance for the dropped approval, and a v0.6 stub whose validation costs what mode 1's
 * does.
 */
describe('permissionless ERC-20 on v0.6 with the allowance in place: no approval batched in the op sent', () => {
  test('an unlimited approval in the wallet’s own calls, then an op with none: alto’s estimates ≤ Patron’s bounds, both mined', {
    todo: 'fails: the approval permissionless estimated and dropped (preVerificationGas), then AA40 (the stub skips mode 1’s prefund)',
  }, async (t) => {
    const smartAccount = await account('erc20-allowance');
    await mintToken(x.fx, usdcOf().address, smartAccount.address, 100_000_000n);
    const unlimited = {
      to: usdcOf().address,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [x.fx.paymaster, maxUint256] }),
    };
    const first = await sendThrough(smartAccount, 'erc20', [unlimited, counterCall]);
    t.diagnostic(`own approval: alto estimate ${first.altoPreVerificationGas}, Patron bound ${first.bound}`);
    assert.ok(first.altoPreVerificationGas <= first.bound, `alto ${first.altoPreVerificationGas} > ${first.bound}`);
    assert.equal(first.event.args.success, true);

    const second = await sendThrough(smartAccount, 'erc20');
    t.diagnostic(
      `no approval: alto estimate ${second.altoPreVerificationGas}, Patron needed ${second.needed}, bound ${second.bound}; estimated callData ${second.estimated.callData.length / 2 - 1} bytes, sent ${second.sent.callData.length / 2 - 1}`,
    );
    assert.ok(second.altoPreVerificationGas <= second.bound, `alto ${second.altoPreVerificationGas} > ${second.bound}`);
    assert.equal(second.event.args.success, true);
  });
});
