import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SimpleMerkleTree } from '@openzeppelin/merkle-tree';
import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex } from 'viem';
import { entryPoint07Address } from 'viem/account-abstraction';
import { checkMeeQuote, MEE_MAX_WINDOW_SECONDS } from '../src/mee/checkMeeQuote.js';
import { MeeQuoteRefusedError } from '../src/mee/MeeQuoteRefusedError.js';
import { meeQuoteSchema, type MeeQuote as ParsedQuote } from '../src/mee/meeQuote.js';
import { MEE_VERSIONS, meeNonceKey } from '../src/mee/meeVersions.js';
import {
  buildMeeQuote,
  cloneMeeQuote,
  encodeNexusExecuteSingle,
  encodePaymentCallData,
  rehashMeeQuote,
} from './helpers/meeQuote.js';
import type { MeeQuote } from './helpers/meeQuoteWire.js';

const TANK = getAddress('0x00000000000000000000000000000000000074a1');
const OTHER_TANK = getAddress('0x00000000000000000000000000000000000074a2');
const USER = getAddress('0x00000000000000000000000000000000000a11ce');
const TOKEN = getAddress('0x0000000000000000000000000000000000005dc0');
const NODE = getAddress('0x000000000000000000000000000000000000n0de'.replace('n0de', '0de0'));
const ATTACKER = getAddress('0x000000000000000000000000000000000000bad0');
const NODE_PAYMASTER = getAddress('0x0000000000000000000000000000000000009a70');
const CHAIN = 8453;
const OTHER_CHAIN = 10;
const NOW = 1_800_000_000;
const VERSION = '2.2.1' as const;
const LANE = 77;
const NONCE = (meeNonceKey({ lane: LANE, validator: MEE_VERSIONS[VERSION].validator }) << 64n) | 3n;
const AMOUNT = 1_234_567n;

const tank = { chainId: CHAIN, address: TANK, token: TOKEN, meeVersion: VERSION };

function honest(over: { userChain?: number; lower?: number; upper?: number } = {}): MeeQuote {
  return buildMeeQuote({
    node: NODE,
    nodePaymaster: NODE_PAYMASTER,
    payment: { chainId: CHAIN, tank: TANK, token: TOKEN, nonce: NONCE, tokenWeiAmount: AMOUNT },
    userOps: [
      {
        chainId: over.userChain ?? CHAIN,
        sender: USER,
        nonce: 0n,
        callData: encodeNexusExecuteSingle({ to: TOKEN, value: 0n, data: '0x' }),
      },
    ],
    lowerBound: over.lower ?? NOW,
    upperBound: over.upper ?? NOW + 180,
  });
}

const parse = (q: MeeQuote): ParsedQuote => meeQuoteSchema.parse(JSON.parse(JSON.stringify(q)));

function check(q: MeeQuote, over: { trustedNodes?: readonly Address[]; tanks?: readonly Address[] } = {}) {
  return checkMeeQuote({
    quote: parse(q),
    tank,
    tankAddresses: new Set((over.tanks ?? [TANK, OTHER_TANK]).map((a) => a.toLowerCase())),
    trustedNodes: new Set((over.trustedNodes ?? [NODE]).map((a) => a.toLowerCase())),
    entryPoint: entryPoint07Address,
    nowSeconds: NOW,
  });
}

function refusedWith(reason: string, f: () => unknown): void {
  assert.throws(f, (err: unknown) => {
    assert.ok(err instanceof MeeQuoteRefusedError, String(err));
    assert.equal(err.reason, reason, err.message);
    return true;
  });
}

/** A quote changed by the attacker, its hashes and root rebuilt (self-consistent) unless `keepHashes`. */
function mutated(f: (q: MeeQuote) => void, keepHashes = false): MeeQuote {
  const q = cloneMeeQuote(honest());
  f(q);
  return keepHashes ? q : rehashMeeQuote(q);
}

const payment = (q: MeeQuote) => {
  const p = q.userOps[0];
  assert.ok(p !== undefined);
  return p;
};

describe('checkMeeQuote: what a tank signs', () => {
  test('an honest quote passes: the root is the quote hash, leaf 0 is proven, the lane and amount are read', () => {
    const q = honest();
    const c = check(q);
    assert.equal(c.root, q.hash);
    assert.equal(c.amount, AMOUNT);
    assert.equal(c.lane, LANE);
    assert.equal(c.paymentHash, payment(q).userOpHash);
    assert.equal(SimpleMerkleTree.verify(c.root, payment(q).meeUserOpHash, [...c.proof]), true);
    // User ops on another chain are hashed with that chain's id.
    assert.doesNotThrow(() => check(honest({ userChain: OTHER_CHAIN })));
  });

  test('callData swapped under the original hashes: hash_mismatch', () => {
    const q = mutated((x) => {
      payment(x).userOp.callData = encodePaymentCallData({ token: TOKEN, node: ATTACKER, amount: AMOUNT });
    }, true);
    refusedWith('hash_mismatch', () => check(q));
  });

  test('a window changed under the original meeUserOpHash: hash_mismatch', () => {
    const q = mutated((x) => {
      payment(x).upperBoundTimestamp = String(NOW + 170);
    }, true);
    refusedWith('hash_mismatch', () => check(q));
  });

  test('a user op hashed for another chain than it says: hash_mismatch', () => {
    const q = mutated((x) => {
      const op = x.userOps[1];
      assert.ok(op !== undefined);
      op.chainId = String(OTHER_CHAIN);
    }, true);
    refusedWith('hash_mismatch', () => check(q));
  });

  test('a forged root (a tree with a hidden leaf): root_mismatch', () => {
    const hidden = '0x1111111111111111111111111111111111111111111111111111111111111111';
    const q = mutated((x) => {
      x.hash = SimpleMerkleTree.of([...x.userOps.map((o) => o.meeUserOpHash), hidden], { sortLeaves: true })
        .root as Hex;
    }, true);
    refusedWith('root_mismatch', () => check(q));
  });

  test('a second op from the tank, or from another tank Patron holds: tank_op', () => {
    const second = (sender: Address) =>
      mutated((x) => {
        const op = x.userOps[1];
        assert.ok(op !== undefined);
        op.userOp.sender = sender;
        op.userOp.callData = encodePaymentCallData({ token: TOKEN, node: ATTACKER, amount: 10n ** 12n });
      });
    refusedWith('tank_op', () => check(second(TANK)));
    refusedWith('tank_op', () => check(second(OTHER_TANK)));
    // The same quote passes the tank check when the second address is no tank of Patron's.
    assert.doesNotThrow(() => check(second(OTHER_TANK), { tanks: [TANK] }));
  });

  test('the payment op not first: payment_op', () => {
    const q = mutated((x) => {
      x.userOps.reverse();
    });
    refusedWith('payment_op', () => check(q));
  });

  test('a quote for another tank, token or chain than the URL names: tank_mismatch', () => {
    for (const f of [
      (x: MeeQuote) => {
        x.paymentInfo.chainId = String(OTHER_CHAIN);
      },
      (x: MeeQuote) => {
        x.paymentInfo.sender = OTHER_TANK;
      },
      (x: MeeQuote) => {
        x.paymentInfo.token = ATTACKER;
      },
    ]) {
      refusedWith('tank_mismatch', () => check(mutated(f)));
    }
  });

  test('the payment op on another chain than the tank: payment_op', () => {
    const q = mutated((x) => {
      payment(x).chainId = String(OTHER_CHAIN);
    });
    refusedWith('payment_op', () => check(q));
  });

  test('the payment op deploys the tank, names no paymaster, or is short-encoded: payment_op', () => {
    refusedWith('payment_op', () =>
      check(
        mutated((x) => {
          payment(x).userOp.initCode = `0x${'ab'.repeat(40)}`;
        }),
      ),
    );
    refusedWith('payment_op', () =>
      check(
        mutated((x) => {
          payment(x).userOp.paymasterAndData = '0x';
        }),
      ),
    );
    const short = mutated((x) => {
      payment(x).shortEncoding = true;
    });
    refusedWith('payment_op', () => check(short));
  });

  test('the payment call: to someone else, another amount, another token, an approval, two calls: payment_call', () => {
    const withCall = (callData: Hex) =>
      mutated((x) => {
        payment(x).userOp.callData = callData;
      });
    const cases: Hex[] = [
      encodePaymentCallData({ token: TOKEN, node: ATTACKER, amount: AMOUNT }),
      encodePaymentCallData({ token: TOKEN, node: NODE, amount: AMOUNT + 1n }),
      encodePaymentCallData({ token: ATTACKER, node: NODE, amount: AMOUNT }),
      encodeNexusExecuteSingle({
        to: TOKEN,
        value: 0n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [ATTACKER, AMOUNT] }),
      }),
      encodeNexusExecuteSingle({
        to: TOKEN,
        value: 1n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [NODE, AMOUNT] }),
      }),
      // transfer with a trailing word: a second reading of the same call
      encodeNexusExecuteSingle({
        to: TOKEN,
        value: 0n,
        data: `${encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [NODE, AMOUNT] })}${'00'.repeat(32)}`,
      }),
    ];
    for (const c of cases) refusedWith('payment_call', () => check(withCall(c)));
    // The node named in the quote is the recipient the transfer must go to, and the amount its tokenWeiAmount.
    refusedWith('payment_call', () =>
      check(
        mutated((x) => {
          x.node = ATTACKER;
        }),
        { trustedNodes: [NODE, ATTACKER] },
      ),
    );
    refusedWith('payment_call', () =>
      check(
        mutated((x) => {
          x.paymentInfo.tokenWeiAmount = String(AMOUNT - 1n);
        }),
      ),
    );
  });

  test('a node the operator did not list: node_not_trusted (none listed: none trusted)', () => {
    refusedWith('node_not_trusted', () => check(honest(), { trustedNodes: [] }));
    refusedWith('node_not_trusted', () => check(honest(), { trustedNodes: [ATTACKER] }));
  });

  test('windows: too long, too far ahead, over: window', () => {
    refusedWith('window', () => check(honest({ lower: NOW, upper: NOW + MEE_MAX_WINDOW_SECONDS + 1 })));
    refusedWith('window', () => check(honest({ lower: NOW + 500, upper: NOW + 1000 })));
    refusedWith('window', () => check(honest({ lower: NOW + 200, upper: NOW + 300 })));
    refusedWith('window', () => check(honest({ lower: NOW - 300, upper: NOW - 1 })));
    assert.doesNotThrow(() => check(honest({ lower: NOW - 60, upper: NOW + MEE_MAX_WINDOW_SECONDS - 60 })));
  });

  test("a nonce key that is not Patron's layout for the tank's validator: nonce_unknown", () => {
    for (const nonce of [3n, (BigInt(OTHER_TANK) << 64n) | 3n]) {
      const q = mutated((x) => {
        payment(x).userOp.nonce = nonce.toString();
        x.paymentInfo.nonce = nonce.toString();
      });
      refusedWith('nonce_unknown', () => check(q));
    }
  });
});
