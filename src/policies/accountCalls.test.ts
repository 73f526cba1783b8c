import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import {
  type Abi,
  type Address,
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  getAddress,
  type Hex,
  pad,
  parseAbi,
  parseAbiParameters,
  size,
  toHex,
} from 'viem';
import { decodeAccountCalls, SAFE_MULTISEND_ADDRESSES } from './accountCalls.js';

/**
 * Call data produced by each account's own ABI: SimpleAccount v0.6 from @account-abstraction/contracts' artifact,
 * Biconomy Smart Account v2 from its compiled artifact (build/contracts/biconomy), and the published function
 * signatures of Safe's 4337 module, Kernel v2, Coinbase Smart Wallet, Light Account and ERC-7579 accounts.
 */
const require = createRequire(import.meta.url);
const simpleAccountAbi = (
  JSON.parse(readFileSync(require.resolve('@account-abstraction/contracts/artifacts/SimpleAccount.json'), 'utf8')) as {
    abi: Abi;
  }
).abi;
const biconomyAbi = (
  JSON.parse(readFileSync(new URL('../../build/contracts/biconomy/SmartAccount.json', import.meta.url), 'utf8')) as {
    abi: Abi;
  }
).abi;
const safeModuleAbi = parseAbi([
  'function executeUserOp(address to, uint256 value, bytes data, uint8 operation)',
  'function executeUserOpWithErrorString(address to, uint256 value, bytes data, uint8 operation)',
]);
const multiSendAbi = parseAbi(['function multiSend(bytes transactions) payable']);
const kernelV2Abi = parseAbi([
  'function execute(address to, uint256 value, bytes data, uint8 operation)',
  'struct Call { address to; uint256 value; bytes data; }',
  'function executeBatch(Call[] calls)',
]);
const coinbaseAbi = parseAbi([
  'function execute(address target, uint256 value, bytes data)',
  'struct Call { address target; uint256 value; bytes data; }',
  'function executeBatch(Call[] calls)',
]);
const lightAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, bytes[] func)',
  'function executeBatch(address[] dest, uint256[] value, bytes[] func)',
]);
const erc7579Abi = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);

const TOKEN: Address = '0x1111111111111111111111111111111111111111';
const NFT: Address = '0x2222222222222222222222222222222222222222';
const USER: Address = '0x3333333333333333333333333333333333333333';
const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [USER, 5n] });
const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [NFT, 7n] });
const TRANSFER = '0xa9059cbb';
const APPROVE = '0x095ea7b3';

/** The decoded calls as [to, value, selector]. */
function calls(callData: Hex) {
  const r = decodeAccountCalls(callData);
  assert.ok(r.ok, `decoded: ${r.ok ? '' : r.reason}`);
  return r.calls.map((c) => [c.to, c.value, c.selector]);
}
function refused(callData: Hex, reason: RegExp) {
  const r = decodeAccountCalls(callData);
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.reason, reason);
  return r;
}

/** Safe MultiSend's packed entry. */
const multiSendEntry = (operation: number, to: Address, value: bigint, data: Hex) =>
  encodePacked(['uint8', 'address', 'uint256', 'uint256', 'bytes'], [operation, to, value, BigInt(size(data)), data]);

describe('decodeAccountCalls', () => {
  test('SimpleAccount v0.6: execute and executeBatch(address[],bytes[])', () => {
    assert.deepEqual(
      calls(encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [TOKEN, 3n, transfer] })),
      [[TOKEN, 3n, TRANSFER]],
    );
    assert.deepEqual(
      calls(
        encodeFunctionData({
          abi: simpleAccountAbi,
          functionName: 'executeBatch',
          args: [
            [TOKEN, NFT],
            [transfer, '0x'],
          ],
        }),
      ),
      [
        [TOKEN, 0n, TRANSFER],
        [NFT, 0n, undefined],
      ],
    );
  });

  test('Light Account: executeBatch with values', () => {
    const data = encodeFunctionData({
      abi: lightAccountAbi,
      functionName: 'executeBatch',
      args: [
        [TOKEN, USER],
        [0n, 9n],
        [approve, '0x'],
      ],
    });
    assert.deepEqual(calls(data), [
      [TOKEN, 0n, APPROVE],
      [USER, 9n, undefined],
    ]);
  });

  test('Biconomy Smart Account v2: execute, execute_ncC, executeBatch, executeBatch_y6U', () => {
    for (const functionName of ['execute', 'execute_ncC'] as const) {
      const data = encodeFunctionData({ abi: biconomyAbi, functionName, args: [TOKEN, 1n, transfer] });
      assert.deepEqual(calls(data), [[TOKEN, 1n, TRANSFER]], functionName);
    }
    for (const functionName of ['executeBatch', 'executeBatch_y6U'] as const) {
      const data = encodeFunctionData({
        abi: biconomyAbi,
        functionName,
        args: [
          [TOKEN, NFT],
          [0n, 2n],
          [approve, transfer],
        ],
      });
      assert.deepEqual(
        calls(data),
        [
          [TOKEN, 0n, APPROVE],
          [NFT, 2n, TRANSFER],
        ],
        functionName,
      );
    }
  });

  test('Coinbase Smart Wallet and Kernel v2: executeBatch of structs; Kernel execute with operation 0', () => {
    const batch = [
      { target: TOKEN, value: 0n, data: transfer },
      { target: NFT, value: 4n, data: approve },
    ];
    const expected = [
      [TOKEN, 0n, TRANSFER],
      [NFT, 4n, APPROVE],
    ];
    assert.deepEqual(
      calls(encodeFunctionData({ abi: coinbaseAbi, functionName: 'executeBatch', args: [batch] })),
      expected,
    );
    const kernelBatch = batch.map((c) => ({ to: c.target, value: c.value, data: c.data }));
    assert.deepEqual(
      calls(encodeFunctionData({ abi: kernelV2Abi, functionName: 'executeBatch', args: [kernelBatch] })),
      expected,
    );
    assert.deepEqual(
      calls(encodeFunctionData({ abi: kernelV2Abi, functionName: 'execute', args: [TOKEN, 0n, transfer, 0] })),
      [[TOKEN, 0n, TRANSFER]],
    );
    const r = refused(
      encodeFunctionData({ abi: kernelV2Abi, functionName: 'execute', args: [TOKEN, 0n, transfer, 1] }),
      /operation 1/,
    );
    assert.equal(r.selector, '0x51945447');
  });

  test('Safe 4337 module: a call, and a MultiSend batch by delegatecall to a known MultiSend', () => {
    for (const functionName of ['executeUserOp', 'executeUserOpWithErrorString'] as const) {
      const data = encodeFunctionData({ abi: safeModuleAbi, functionName, args: [TOKEN, 0n, transfer, 0] });
      assert.deepEqual(calls(data), [[TOKEN, 0n, TRANSFER]], functionName);
    }
    const transactions = concat([multiSendEntry(0, TOKEN, 0n, approve), multiSendEntry(0, USER, 8n, '0x')]);
    const multiSend = encodeFunctionData({ abi: multiSendAbi, functionName: 'multiSend', args: [transactions] });
    for (const address of SAFE_MULTISEND_ADDRESSES) {
      const data = encodeFunctionData({
        abi: safeModuleAbi,
        functionName: 'executeUserOp',
        args: [address, 0n, multiSend, 1],
      });
      assert.deepEqual(calls(data), [
        [TOKEN, 0n, APPROVE],
        [USER, 8n, undefined],
      ]);
    }
  });

  test('Safe fails closed: delegatecall elsewhere, a nested delegatecall, a truncated batch', () => {
    const multiSend = (tx: Hex) => encodeFunctionData({ abi: multiSendAbi, functionName: 'multiSend', args: [tx] });
    const viaModule = (to: Address, data: Hex, operation = 1) =>
      encodeFunctionData({ abi: safeModuleAbi, functionName: 'executeUserOp', args: [to, 0n, data, operation] });
    const [known] = SAFE_MULTISEND_ADDRESSES;
    assert.ok(known);
    refused(viaModule(TOKEN, multiSend(multiSendEntry(0, TOKEN, 0n, transfer))), /not one of Safe's MultiSend/);
    refused(viaModule(known, multiSend(multiSendEntry(1, TOKEN, 0n, transfer))), /operation 1/);
    const whole = multiSendEntry(0, TOKEN, 0n, transfer);
    refused(viaModule(known, multiSend(whole.slice(0, -10) as Hex)), /truncated|longer/);
    refused(viaModule(known, transfer), /not multiSend/);
    refused(viaModule(TOKEN, transfer, 2), /operation 2/);
  });

  test('ERC-7579 execute: single and batch calls; delegatecall fails closed', () => {
    const singleMode = pad('0x00', { dir: 'right', size: 32 });
    const batchMode = pad('0x01', { dir: 'right', size: 32 });
    const delegateMode = pad('0xff', { dir: 'right', size: 32 });
    const single = encodePacked(['address', 'uint256', 'bytes'], [TOKEN, 6n, transfer]);
    assert.deepEqual(
      calls(encodeFunctionData({ abi: erc7579Abi, functionName: 'execute', args: [singleMode, single] })),
      [[TOKEN, 6n, TRANSFER]],
    );
    const batch = encodeAbiParameters(parseAbiParameters('(address target, uint256 value, bytes callData)[]'), [
      [
        { target: TOKEN, value: 0n, callData: approve },
        { target: NFT, value: 1n, callData: '0x' },
      ],
    ]);
    assert.deepEqual(
      calls(encodeFunctionData({ abi: erc7579Abi, functionName: 'execute', args: [batchMode, batch] })),
      [
        [TOKEN, 0n, APPROVE],
        [NFT, 1n, undefined],
      ],
    );
    refused(encodeFunctionData({ abi: erc7579Abi, functionName: 'execute', args: [delegateMode, single] }), /0xff/);
    refused(
      encodeFunctionData({ abi: erc7579Abi, functionName: 'execute', args: [singleMode, toHex(1, { size: 20 })] }),
      /shorter/,
    );
  });

  test('an unknown method, malformed data and short data fail closed, naming the selector', () => {
    const unknown = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [USER, 1n] });
    assert.deepEqual(decodeAccountCalls(unknown), {
      ok: false,
      selector: TRANSFER,
      reason: `unknown account method ${TRANSFER}`,
    });
    const truncated = encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: 'execute',
      args: [TOKEN, 0n, transfer],
    }).slice(0, 80) as Hex;
    assert.deepEqual(decodeAccountCalls(truncated), {
      ok: false,
      selector: '0xb61d27f6',
      reason: 'malformed execute call data',
    });
    assert.deepEqual(decodeAccountCalls('0xb61d'), {
      ok: false,
      selector: undefined,
      reason: 'callData shorter than a selector',
    });
    assert.deepEqual(decodeAccountCalls('0x'), { ok: true, layout: 'no call', calls: [] });
  });

  test('a batch whose arrays differ in length fails closed', () => {
    const data = encodeFunctionData({
      abi: biconomyAbi,
      functionName: 'executeBatch',
      args: [[TOKEN, NFT], [0n], [transfer, transfer]],
    });
    refused(data, /different lengths/);
  });
});

describe('decodeAccountCalls: the hand-read execute(address,uint256,bytes)', () => {
  const abi = parseAbi(['function execute(address dest, uint256 value, bytes func)']);
  const to = '0x00000000000000000000000000000000c0c0c0c0';

  test('agrees with the generic ABI decoder for every data length around the word boundaries', () => {
    for (const length of [0, 1, 4, 31, 32, 33, 63, 64, 65, 200]) {
      const data =
        `0x${Array.from({ length }, (_, i) => ((i * 37 + 11) % 256).toString(16).padStart(2, '0')).join('')}` as Hex;
      const value = BigInt(length) * 10n ** 18n + 7n;
      const callData = encodeFunctionData({ abi, functionName: 'execute', args: [to, value, data] });
      const decoded = decodeAccountCalls(callData);
      assert.ok(decoded.ok);
      // What viem's generic decoder reads from the same bytes.
      const [gTo, gValue, gData] = decodeFunctionData({ abi, data: callData }).args;
      assert.deepEqual(decoded.calls, [
        {
          to: getAddress(gTo),
          value: gValue,
          data: gData,
          selector: length >= 4 ? (gData.slice(0, 10) as Hex) : undefined,
        },
      ]);
    }
  });

  test('a non-canonical encoding is left to the generic decoder, which refuses the malformed', () => {
    const callData = encodeFunctionData({ abi, functionName: 'execute', args: [to, 0n, '0x12345678'] });
    const body = callData.slice(10);
    const dirtyPadding = `${callData.slice(0, -2)}01` as Hex;
    const truncated = callData.slice(0, -64) as Hex;
    const dirtyAddress = `0xb61d27f6ff${body.slice(2)}` as Hex;
    assert.equal(decodeAccountCalls(truncated).ok, false);
    // viem reads an address from its low 20 bytes; the account's own decoder would revert, so nothing is lost.
    const dirty = decodeAccountCalls(dirtyAddress);
    assert.ok(dirty.ok);
    assert.equal(dirty.calls[0]?.to, getAddress(to));
    // viem ignores bytes after the data's length inside its padding; whichever path reads it, the call is the same.
    const lenient = decodeAccountCalls(dirtyPadding);
    if (lenient.ok) assert.equal(lenient.calls[0]?.selector, '0x12345678');
  });
});

describe('decodeAccountCalls with the sender’s kind', () => {
  const artifactAbi = (pkg: string, name: string) =>
    (JSON.parse(readFileSync(require.resolve(`${pkg}/artifacts/${name}.json`), 'utf8')) as { abi: Abi }).abi;
  const v07 = artifactAbi('@account-abstraction/contracts-v07', 'SimpleAccount');
  const simple7702V09 = artifactAbi('@account-abstraction/contracts-v09', 'Simple7702Account');
  const batchV06 = encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: 'executeBatch',
    args: [
      [TOKEN, NFT],
      [transfer, approve],
    ],
  });
  const batchV07 = encodeFunctionData({
    abi: v07,
    functionName: 'executeBatch',
    args: [[TOKEN], [0n], [transfer]],
  });
  const batchV08 = encodeFunctionData({
    abi: simple7702V09,
    functionName: 'executeBatch',
    args: [[{ target: TOKEN, value: 0n, data: transfer }]],
  });
  const kernelSingle = encodeFunctionData({
    abi: kernelV2Abi,
    functionName: 'execute',
    args: [TOKEN, 0n, transfer, 0],
  });
  const safeSingle = encodeFunctionData({
    abi: safeModuleAbi,
    functionName: 'executeUserOp',
    args: [TOKEN, 0n, transfer, 0],
  });
  const executeV07 = encodeFunctionData({ abi: v07, functionName: 'execute', args: [TOKEN, 0n, transfer] });

  test('each account decodes the methods its own ABI has, and only those', () => {
    const cases: readonly [Hex, Parameters<typeof decodeAccountCalls>[1], boolean][] = [
      [batchV06, 'simpleAccountV06', true],
      [batchV06, 'simpleAccountV07', false],
      [batchV06, 'simpleAccountV08', false],
      [batchV07, 'simpleAccountV07', true],
      [batchV07, 'simpleAccountV06', false],
      [batchV08, 'simpleAccountV08', true],
      [batchV08, 'simpleAccountV07', false],
      [kernelSingle, 'kernelV2', true],
      [kernelSingle, 'simpleAccountV07', false],
      [safeSingle, 'safe4337', true],
      [safeSingle, 'kernelV2', false],
      [executeV07, 'simpleAccountV07', true],
      [executeV07, 'simpleAccountV08', true],
      [executeV07, 'biconomyV2', true],
      [executeV07, 'safe4337', false],
      [executeV07, 'kernelV3', false],
    ];
    for (const [callData, kind, ok] of cases) {
      const r = decodeAccountCalls(callData, kind);
      assert.equal(r.ok, ok, `${callData.slice(0, 10)} as ${kind}`);
      if (r.ok) assert.deepEqual(r.calls[0]?.to, TOKEN);
      else assert.match(r.reason, new RegExp(`not a method a ${kind} account executes`));
    }
  });
});
