import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEEVersion } from '@biconomy/abstractjs';
import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import {
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  type Hex,
  hexToBigInt,
  keccak256,
  parseAbi,
  size,
  slice,
  zeroHash,
} from 'viem';
import { toPackedUserOperation } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { createMerkleTree } from './abstractjsMee.js';
import { buildMeeQuote, cloneMeeQuote, encodeNexusExecuteSingle, rehashMeeQuote } from './meeQuote.js';
import { type MeeQuote, meeUserOpHashOf, quoteLeaves, quoteRoot, toViemUserOperation } from './meeQuoteWire.js';
import { offlineNexusAccount } from './offlineSdkAccounts.js';

const NODE: Address = '0x4b19129ea58431a06d01054f69ab4c5ee0b1d2ac';
const NODE_PAYMASTER: Address = '0x0000000000000000000000000000000000000b0b';
const TANK: Address = '0x1111111111111111111111111111111111111111';
const USDC: Address = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const USER: Address = '0x2222222222222222222222222222222222222222';
const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

function sample(overrides: { shortEncoding?: boolean; ops?: number } = {}): MeeQuote {
  const ops = Array.from({ length: overrides.ops ?? 2 }, (_, i) => ({
    chainId: i % 2 === 0 ? 8453 : 10,
    sender: USER,
    nonce: BigInt(i),
    callData: encodeNexusExecuteSingle({ to: USDC, value: 0n, data: '0x' }),
    ...(i === 0 ? { initCode: '0x000000001D1D5004a02bAfAb9de2D6CE5b7B13de1234' as Hex } : {}),
  }));
  return buildMeeQuote({
    node: NODE,
    nodePaymaster: NODE_PAYMASTER,
    payment: { chainId: 8453, tank: TANK, token: USDC, nonce: (7n << 64n) | 3n, tokenWeiAmount: 12_345n },
    userOps: ops,
    lowerBound: 1_800_000_000,
    upperBound: 1_800_000_180,
    ...(overrides.shortEncoding === undefined ? {} : { shortEncoding: overrides.shortEncoding }),
  });
}

const executeAbi = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);

describe('buildMeeQuote', () => {
  it('gives a root that abstractjs createMerkleTree rebuilds from the leaves sponsorSupertransaction picks', () => {
    for (const shortEncoding of [false, true]) {
      const quote = sample({ shortEncoding });
      const sdkTree = createMerkleTree(quoteLeaves(quote));
      assert.equal(sdkTree.root, quote.hash);
      assert.deepEqual(
        quoteLeaves(quote),
        quote.userOps.map((op) => (shortEncoding ? op.userOpHash : op.meeUserOpHash)),
      );
      // Leaf 0 (the payment op) is proven by the proof the sponsor puts in its signature.
      const proof = sdkTree.getProof(0);
      assert.ok(SimpleMerkleTree.verify(quote.hash, quoteLeaves(quote)[0] ?? zeroHash, proof));
    }
  });

  it('puts the payment op first: sender = tank, the given nonce, execute(single, token.transfer(node, amount))', () => {
    const quote = sample();
    const [payment] = quote.userOps;
    assert.ok(payment);
    assert.equal(payment.userOp.sender, TANK);
    assert.equal(payment.userOp.nonce, ((7n << 64n) | 3n).toString());
    assert.equal(payment.userOp.signature, '0x');
    assert.equal(payment.chainId, '8453');
    const { functionName, args } = decodeFunctionData({ abi: executeAbi, data: payment.userOp.callData });
    assert.equal(functionName, 'execute');
    const [mode, executionCalldata] = args;
    assert.equal(mode, zeroHash, 'single call, default exec type');
    assert.equal(slice(executionCalldata, 0, 20).toLowerCase(), USDC);
    assert.equal(hexToBigInt(slice(executionCalldata, 20, 52)), 0n);
    const inner = decodeFunctionData({ abi: erc20Abi, data: slice(executionCalldata, 52) });
    assert.equal(inner.functionName, 'transfer');
    assert.equal(String(inner.args[0]).toLowerCase(), NODE);
    assert.equal(inner.args[1], 12_345n);
    assert.deepEqual(quote.paymentInfo, {
      sponsored: true,
      sender: TANK,
      token: USDC,
      nonce: ((7n << 64n) | 3n).toString(),
      chainId: '8453',
      callGasLimit: '75000',
      verificationGasLimit: '150000',
      tokenAmount: '0.012345',
      tokenWeiAmount: '12345',
      tokenValue: '0.012345',
    });
  });

  it('encodes execute as abstractjs Nexus 1.2.0 and 1.3.x accounts do', async () => {
    const call = {
      to: USDC,
      value: 5n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [NODE, 1n] }),
    };
    for (const version of [MEEVersion.V2_0_0, MEEVersion.V2_2_1]) {
      const account = await offlineNexusAccount({ version, owner, address: TANK });
      assert.equal(encodeNexusExecuteSingle(call), await account.encodeExecute(call), version);
    }
  });

  it('hashes each op as abstractjs Nexus getUserOpHash (EntryPoint v0.7) and packs paymasterAndData v0.7-style', async () => {
    const quote = sample();
    const account = await offlineNexusAccount({ version: MEEVersion.V2_0_0, owner, address: TANK });
    for (const op of quote.userOps.filter((o) => o.chainId === '8453')) {
      assert.equal(op.userOpHash, account.getUserOpHash(toViemUserOperation(op.userOp)));
      const packed = toPackedUserOperation(toViemUserOperation(op.userOp));
      assert.equal(packed.paymasterAndData, op.userOp.paymasterAndData);
      assert.equal(packed.initCode, op.userOp.initCode);
      assert.equal(slice(op.userOp.paymasterAndData, 0, 20), NODE_PAYMASTER);
      assert.equal(size(op.userOp.paymasterAndData), 52 + 32);
      // MEEUserOpHashLib: keccak256(bytes.concat(keccak256(abi.encode(bytes32, uint256, uint256)))), whose static
      // words are what encodePacked of the same types gives.
      const words = encodePacked(
        ['bytes32', 'uint256', 'uint256'],
        [op.userOpHash, BigInt(op.lowerBoundTimestamp), BigInt(op.upperBoundTimestamp)],
      );
      assert.equal(op.meeUserOpHash, keccak256(keccak256(words)));
      assert.equal(
        op.meeUserOpHash,
        meeUserOpHashOf({
          userOpHash: op.userOpHash,
          lowerBound: BigInt(op.lowerBoundTimestamp),
          upperBound: BigInt(op.upperBoundTimestamp),
        }),
      );
    }
    // The op on chain 10 hashes with chain 10, so it differs from the same fields on 8453.
    const other = quote.userOps[2];
    assert.ok(other);
    assert.notEqual(other.userOpHash, account.getUserOpHash(toViemUserOperation(other.userOp)));
  });

  it('rehashMeeQuote leaves an untouched quote as it was and moves the root after any op field changes', () => {
    const quote = sample();
    assert.deepEqual(rehashMeeQuote(quote), quote);
    const mutations: Record<string, (q: MeeQuote) => void> = {
      'payment callData': (q) => {
        const op = q.userOps[0];
        if (op) op.userOp.callData = encodeNexusExecuteSingle({ to: USDC, value: 1n, data: '0x' });
      },
      'payment nonce': (q) => {
        const op = q.userOps[0];
        if (op) op.userOp.nonce = '1';
      },
      'user op sender': (q) => {
        const op = q.userOps[1];
        if (op) op.userOp.sender = TANK;
      },
      'upper bound': (q) => {
        const op = q.userOps[0];
        if (op) op.upperBoundTimestamp = '1900000000';
      },
      'chain id': (q) => {
        const op = q.userOps[1];
        if (op) op.chainId = '1';
      },
    };
    for (const [name, mutate] of Object.entries(mutations)) {
      const changed = cloneMeeQuote(quote);
      mutate(changed);
      // Before rehashing, the stale leaves still give the old root: why a sponsor must recompute them.
      assert.equal(quoteRoot(changed), quote.hash, name);
      const rehashed = rehashMeeQuote(changed);
      assert.notEqual(rehashed.hash, quote.hash, name);
      assert.equal(createMerkleTree(quoteLeaves(rehashed)).root, rehashed.hash, name);
    }
  });
});
