import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Address,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  erc20Abi,
  type Hex,
  pad,
  parseAbi,
  parseAbiParameters,
  toFunctionSelector,
  toHex,
} from 'viem';
import type { AccountKind } from '../config/knownAccountsSettings.js';
import { decodeAccountCalls } from './accountCalls.js';
import { COMPOSABLE_V1_0, COMPOSABLE_V1_1 } from './composableExecution.js';

/**
 * ERC-7579 `execute(bytes32,bytes)` and Nexus's `executeComposable` decoded exactly, per kind: what each account's
 * source (bcnmy/nexus ModeLib/ExecLib, zerodevapp/kernel ExecLib, bcnmy/composability) runs, and a refusal for
 * everything else. The SDKs' own encodings are test/accountCalls.sdk.test.ts.
 */
const TOKEN: Address = '0x1111111111111111111111111111111111111111';
const NFT: Address = '0x2222222222222222222222222222222222222222';
const USER: Address = '0x3333333333333333333333333333333333333333';
const STORAGE: Address = '0x4444444444444444444444444444444444444444';
const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [USER, 5n] });
const TRANSFER = '0xa9059cbb';
const APPROVE = '0x095ea7b3';
const WRITE_STORAGE = toFunctionSelector('writeStorage(bytes32,bytes32,address)');
const abi = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);
const BATCH = parseAbiParameters('(address target, uint256 value, bytes callData)[]');

/** callType ‖ execType ‖ unused(4) ‖ modeSelector(4) ‖ payload(22). */
const mode = (callType: number, execType = 0, tail: Hex = '0x') =>
  pad(concat([toHex(callType, { size: 1 }), toHex(execType, { size: 1 }), tail]), { dir: 'right', size: 32 });
const single = encodePacked(['address', 'uint256', 'bytes'], [TOKEN, 6n, transfer]);
const batch = encodeAbiParameters(BATCH, [
  [
    { target: TOKEN, value: 0n, callData: transfer },
    { target: NFT, value: 1n, callData: '0x' },
  ],
]);
const execute = (m: Hex, execution: Hex) => encodeFunctionData({ abi, functionName: 'execute', args: [m, execution] });
const ERC7579_KINDS: readonly AccountKind[] = ['nexusV12', 'nexusV13', 'kernelV3', 'erc7579'];

function decoded(callData: Hex, kind: AccountKind) {
  const r = decodeAccountCalls(callData, kind);
  assert.ok(r.ok, `${kind}: ${r.ok ? '' : r.reason}`);
  return r.calls.map((c) => [c.to, c.value, c.selector]);
}
function refused(callData: Hex, kind: AccountKind | undefined, reason: RegExp) {
  const r = decodeAccountCalls(callData, kind);
  assert.equal(r.ok, false, `${kind} accepted ${callData.slice(0, 80)}`);
  if (!r.ok) assert.match(r.reason, reason, `${kind}`);
}

describe('ERC-7579 execute: the whole mode, per kind', () => {
  test('single and batch calls, default and try exec types, for every ERC-7579 kind', () => {
    for (const kind of ERC7579_KINDS) {
      for (const execType of [0, 1]) {
        assert.deepEqual(decoded(execute(mode(0, execType), single), kind), [[TOKEN, 6n, TRANSFER]]);
        assert.deepEqual(decoded(execute(mode(1, execType), batch), kind), [
          [TOKEN, 0n, TRANSFER],
          [NFT, 1n, undefined],
        ]);
      }
    }
  });

  test('delegatecall, staticcall and unknown call types are refused, each naming why', () => {
    for (const kind of ERC7579_KINDS) {
      refused(execute(mode(0xff), single), kind, /delegatecall \(call type 0xff\)/);
      refused(execute(mode(0xfe), single), kind, /staticcall \(call type 0xfe\)/);
      refused(execute(mode(0x02), batch), kind, /call type 0x02/);
    }
  });

  test('an exec type other than default and try is refused', () => {
    for (const kind of ERC7579_KINDS) {
      refused(execute(mode(0, 2), single), kind, /exec type 0x02/);
      refused(execute(mode(1, 0xff), batch), kind, /exec type 0xff/);
    }
  });

  test('the mode selector and payload: ignored by Nexus and Kernel 0.3, which never read them; refused elsewhere', () => {
    const selector = mode(0, 0, concat(['0x00000000', '0xd4d1e1d9']));
    const payload = mode(1, 0, concat(['0x00000000', '0x00000000', '0x01']));
    const unused = mode(0, 0, '0x01');
    for (const kind of ['nexusV12', 'nexusV13', 'kernelV3'] as const) {
      assert.deepEqual(decoded(execute(selector, single), kind), [[TOKEN, 6n, TRANSFER]]);
      assert.equal(decoded(execute(payload, batch), kind).length, 2);
      assert.equal(decoded(execute(unused, single), kind).length, 1);
    }
    for (const kind of ['erc7579', undefined] as const) {
      refused(execute(selector, single), kind, /non-zero mode selector or payload/);
      refused(execute(payload, batch), kind, /non-zero mode selector or payload/);
      refused(execute(unused, single), kind, /non-zero mode selector or payload/);
    }
  });

  test('single: target ‖ value ‖ data as the account slices it; shorter than 52 bytes is refused', () => {
    const bare = encodePacked(['address', 'uint256'], [USER, 9n]);
    assert.deepEqual(decoded(execute(mode(0), bare), 'nexusV13'), [[USER, 9n, undefined]]);
    refused(execute(mode(0), bare.slice(0, -2) as Hex), 'nexusV13', /shorter than target and value/);
  });

  test('batch: only the canonical ABI encoding, though viem reads the others too', () => {
    // The same array behind an offset of 0x40, with a word of junk before it: viem follows the offset.
    const shifted = concat([pad('0x40'), pad('0xdead'), batch.slice(66) as Hex]);
    const [viemRead] = decodeAbiParameters(BATCH, shifted);
    assert.equal(viemRead.length, 2, 'viem decodes it');
    const trailing = concat([batch, pad('0x01')]);
    assert.equal(decodeAbiParameters(BATCH, trailing)[0].length, 2, 'viem decodes it');
    for (const kind of ERC7579_KINDS) {
      refused(execute(mode(1), shifted), kind, /not in the canonical ABI encoding/);
      refused(execute(mode(1), trailing), kind, /not in the canonical ABI encoding/);
      refused(execute(mode(1), '0x1234'), kind, /malformed batch/);
    }
  });
});

type In10 = {
  fetcherType: number;
  paramData: Hex;
  constraints: readonly { constraintType: number; referenceData: Hex }[];
};
type In11 = In10 & { paramType: number };
const raw = (paramData: Hex): In10 => ({ fetcherType: 0, paramData, constraints: [] });
const staticCall = (paramData: Hex): In10 => ({ fetcherType: 1, paramData, constraints: [] });
const TARGET = 0;
const VALUE = 1;
const CALL_DATA = 2;
const typed = (paramType: number, p: In10): In11 => ({ paramType, ...p });
/** EXEC_RESULT output: store `values` words of the result in `storage` at `slot`. */
const execResult = (values: bigint, storage: Address) => ({
  fetcherType: 0,
  paramData: encodeAbiParameters(parseAbiParameters('uint256, address, bytes32'), [values, storage, pad('0x01')]),
});
const args = `0x${transfer.slice(10)}` as Hex;

const v10 = (executions: readonly unknown[]) =>
  encodeFunctionData({ abi: [COMPOSABLE_V1_0], functionName: 'executeComposable', args: [executions] });
const v11 = (executions: readonly unknown[]) =>
  encodeFunctionData({ abi: [COMPOSABLE_V1_1], functionName: 'executeComposable', args: [executions] });

describe('executeComposable: Nexus 1.2.0 (composability 1.0.0) and 1.3 (1.1.0)', () => {
  test('1.0.0: a static target and value; raw arguments give the whole data, runtime ones only the selector', () => {
    const r = decodeAccountCalls(
      v10([
        { to: TOKEN, value: 0n, functionSig: TRANSFER, inputParams: [raw(args)], outputParams: [] },
        {
          to: NFT,
          value: 3n,
          functionSig: APPROVE,
          inputParams: [
            raw(pad(USER)),
            staticCall(encodeAbiParameters(parseAbiParameters('address, bytes'), [TOKEN, '0x'])),
          ],
          outputParams: [execResult(1n, STORAGE)],
        },
        {
          to: '0x0000000000000000000000000000000000000000',
          value: 0n,
          functionSig: TRANSFER,
          inputParams: [],
          outputParams: [],
        },
      ]),
      'nexusV12',
    );
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.deepEqual(
      r.calls.map((c) => [c.to, c.value, c.selector, c.data, c.runtimeArguments]),
      [
        [TOKEN, 0n, TRANSFER, transfer, undefined],
        [NFT, 3n, APPROVE, APPROVE, true],
        // The output param writes the result through the storage contract it names: a call the allowlist sees.
        [STORAGE, 0n, WRITE_STORAGE, WRITE_STORAGE, true],
      ],
    );
  });

  test('1.1.0: the target and value are input params; one fetched at run time is refused', () => {
    const target = typed(TARGET, raw(pad(TOKEN)));
    const ok = decodeAccountCalls(
      v11([
        {
          functionSig: TRANSFER,
          inputParams: [target, typed(VALUE, raw(toHex(7n, { size: 32 }))), typed(CALL_DATA, raw(args))],
          outputParams: [],
        },
        // No target: the library makes no call, but still runs the output params.
        { functionSig: TRANSFER, inputParams: [], outputParams: [execResult(0n, STORAGE), execResult(2n, NFT)] },
      ]),
      'nexusV13',
    );
    assert.ok(ok.ok, ok.ok ? '' : ok.reason);
    assert.deepEqual(
      ok.calls.map((c) => [c.to, c.value, c.data]),
      [
        [TOKEN, 7n, transfer],
        [NFT, 0n, WRITE_STORAGE],
      ],
    );
    const one = (inputParams: readonly In11[], outputParams: readonly unknown[] = []) =>
      v11([{ functionSig: TRANSFER, inputParams, outputParams }]);
    const fetched = encodeAbiParameters(parseAbiParameters('address, bytes'), [TOKEN, '0x']);
    refused(one([typed(TARGET, staticCall(fetched))]), 'nexusV13', /target fetched at run time/);
    refused(
      one([target, typed(VALUE, { ...raw(concat([TOKEN, USER])), fetcherType: 2 })]),
      'nexusV13',
      /value fetched at run time/,
    );
    refused(one([target, target]), 'nexusV13', /target given twice/);
    refused(one([typed(TARGET, raw(pad('0x01', { dir: 'right' })))]), 'nexusV13', /not an address/);
    refused(one([typed(TARGET, raw(TOKEN))]), 'nexusV13', /target shorter than a word/);
    refused(one([typed(3, raw(pad(TOKEN)))]), 'nexusV13', /input param type 3/);
    refused(one([typed(CALL_DATA, { ...raw(args), fetcherType: 3 })]), 'nexusV13', /input fetcher type 3/);
    refused(
      one([target], [{ fetcherType: 0, paramData: pad('0x01') }]),
      'nexusV13',
      /output param whose data is shorter/,
    );
    refused(one([target], [{ fetcherType: 2, paramData: pad('0x01') }]), 'nexusV13', /output fetcher type 2/);
  });

  test('each Nexus line decodes only its own composability ABI; other kinds none', () => {
    const a = v10([{ to: TOKEN, value: 0n, functionSig: TRANSFER, inputParams: [raw(args)], outputParams: [] }]);
    const b = v11([{ functionSig: TRANSFER, inputParams: [typed(TARGET, raw(pad(TOKEN)))], outputParams: [] }]);
    refused(a, 'nexusV13', /not a method a nexusV13 account executes/);
    refused(b, 'nexusV12', /not a method a nexusV12 account executes/);
    for (const kind of ['kernelV3', 'erc7579', 'coinbaseSmartWallet'] as const) {
      refused(a, kind, /not a method/);
      refused(b, kind, /not a method/);
    }
  });

  test('a composable call not in the canonical ABI encoding is refused', () => {
    const b = v11([{ functionSig: TRANSFER, inputParams: [typed(TARGET, raw(pad(TOKEN)))], outputParams: [] }]);
    assert.ok(decodeAccountCalls(b, 'nexusV13').ok);
    refused(concat([b, pad('0x00')]), 'nexusV13', /not in the canonical ABI encoding/);
  });
});

describe('Coinbase Smart Wallet', () => {
  const coinbase = parseAbi([
    'function execute(address target, uint256 value, bytes data)',
    'struct Call { address target; uint256 value; bytes data; }',
    'function executeBatch(Call[] calls)',
    'function executeWithoutChainIdValidation(bytes[] calls)',
  ]);
  test('execute and executeBatch are decoded; executeWithoutChainIdValidation (a replayable batch of self-calls) is refused', () => {
    const one = encodeFunctionData({ abi: coinbase, functionName: 'execute', args: [TOKEN, 0n, transfer] });
    assert.deepEqual(decoded(one, 'coinbaseSmartWallet'), [[TOKEN, 0n, TRANSFER]]);
    const many = encodeFunctionData({
      abi: coinbase,
      functionName: 'executeBatch',
      args: [
        [
          { target: TOKEN, value: 0n, data: transfer },
          { target: NFT, value: 2n, data: '0x' },
        ],
      ],
    });
    assert.deepEqual(decoded(many, 'coinbaseSmartWallet'), [
      [TOKEN, 0n, TRANSFER],
      [NFT, 2n, undefined],
    ]);
    const replayable = encodeFunctionData({
      abi: coinbase,
      functionName: 'executeWithoutChainIdValidation',
      args: [[one]],
    });
    refused(replayable, 'coinbaseSmartWallet', /unknown account method 0x2c2abd1e/);
  });
});
