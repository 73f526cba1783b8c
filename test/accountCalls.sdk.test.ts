import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as abstractjs from '@biconomy/abstractjs';
import { DEFAULT_CONFIGURATIONS_BY_MEE_VERSION, MEEVersion } from '@biconomy/abstractjs';
import { toKernelSmartAccount, toLightSmartAccount } from 'permissionless/accounts';
import {
  type Address,
  concat,
  createClient,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  pad,
  parseAbi,
} from 'viem';
import { entryPoint07Address, toCoinbaseSmartAccount } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import { COINBASE_SMART_WALLET } from '../src/chain/coinbaseSmartWallet.js';
import { NEXUS } from '../src/chain/nexusAccounts.js';
import type { AccountKind } from '../src/config/knownAccountsSettings.js';
import { decodeAccountCalls } from '../src/policies/accountCalls.js';
import { checkPolicyRules, type SponsorshipFacts } from '../src/policies/policyRules.js';
import { type Policy, policyRulesSchema } from '../src/policies/policySchema.js';
import { offlineNexusAccount, offlineTransport } from './helpers/offlineSdkAccounts.js';
import { testKey } from './helpers/patronPaymasterV06.js';

/**
 * The call data the SDKs themselves build (abstractjs 1.2.3 toNexusAccount for Nexus 1.2.0 and 1.3, viem's
 * toCoinbaseSmartAccount, permissionless's Kernel 0.3 and Light Account), decoded with the sender's kind and
 * checked by a contract allowlist. The SDKs are given a transport that answers only what building the account
 * object reads (helpers/offlineSdkAccounts.ts): the encoders are the SDKs' own code and make no request.
 */
const TOKEN: Address = '0x1111111111111111111111111111111111111111';
const NFT: Address = '0x2222222222222222222222222222222222222222';
const USER: Address = '0x3333333333333333333333333333333333333333';
const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [USER, 5n] });
const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [NFT, 7n] });
const owner = privateKeyToAccount(testKey('account-calls-sdk-owner'));
const one = [{ to: TOKEN, value: 0n, data: transfer }] as const;
const two = [
  { to: TOKEN, value: 0n, data: transfer },
  { to: NFT, value: 3n, data: approve },
] as const;

/** abstractjs exports its composability enums at run time (modules/utils/composabilityCalls.js) but not in its types. */
const { InputParamType, InputParamFetcherType } = abstractjs as unknown as {
  InputParamType: { TARGET: number; VALUE: number; CALL_DATA: number };
  InputParamFetcherType: { RAW_BYTES: number; STATIC_CALL: number; BALANCE: number };
};

const transport = offlineTransport;
const nexus = (version: MEEVersion) => offlineNexusAccount({ version, owner, address: USER });

let n = 0;
const policy = (rules: unknown): Policy => ({
  id: `p${++n}`,
  name: `policy ${n}`,
  active: true,
  rules: policyRulesSchema.parse(rules),
});
const facts = (callData: Hex, kind: AccountKind): SponsorshipFacts => ({
  chainId: 8453,
  sender: USER,
  deploysAccount: false,
  callData,
  maxFeePerGas: 1n,
  worstCaseWei: 1n,
  nowMs: 0,
  nativeUsd: undefined,
  account: { known: true, kind },
});
const onlyTransfer = policy({ contracts: [{ address: TOKEN, selectors: ['0xa9059cbb'] }] });
const both = policy({
  contracts: [
    { address: TOKEN, selectors: ['0xa9059cbb'] },
    { address: NFT, selectors: ['0x095ea7b3'] },
  ],
});

/** The calls as [to, value, data], and the two allowlists' verdicts. */
function check(callData: Hex, kind: AccountKind) {
  const r = decodeAccountCalls(callData, kind);
  assert.ok(r.ok, `${kind}: ${r.ok ? '' : r.reason}`);
  return {
    calls: r.calls.map((c) => [c.to, c.value, c.data]),
    onlyTransfer: checkPolicyRules(onlyTransfer, facts(callData, kind))?.rule,
    both: checkPolicyRules(both, facts(callData, kind))?.rule,
  };
}
const ONE = [[TOKEN, 0n, transfer]];
const TWO = [
  [TOKEN, 0n, transfer],
  [NFT, 3n, approve],
];

describe('the SDKs’ own call data, decoded with the sender’s kind', () => {
  test('abstractjs Nexus 1.2.0 (MEE 2.0.0) and 1.3 (MEE 2.2.1): encodeCalls of one call and of two', async () => {
    for (const [version, kind, other] of [
      [MEEVersion.V2_0_0, 'nexusV12', 'nexusV13'],
      [MEEVersion.V2_2_1, 'nexusV13', 'nexusV12'],
    ] as const) {
      const account = await nexus(version);
      const single = await account.encodeCalls([...one]);
      const batch = await account.encodeCalls([...two]);
      assert.deepEqual(check(single, kind), { calls: ONE, onlyTransfer: undefined, both: undefined });
      assert.deepEqual(check(batch, kind), { calls: TWO, onlyTransfer: 'contractNotAllowed', both: undefined });
      // The same ERC-7579 execute is one layout for both lines: the kind matters for executeComposable only.
      assert.ok(decodeAccountCalls(batch, other).ok);
      // The SDK's try mode is decoded too; its delegatecall mode is refused.
      const tryMode = await account.encodeExecuteBatch([...two], concat(['0x0101', pad('0x', { size: 30 })]));
      assert.deepEqual(check(tryMode, kind).calls, TWO);
      const delegate = await account.encodeExecute(one[0], concat(['0xff00', pad('0x', { size: 30 })]));
      const refused = decodeAccountCalls(delegate, kind);
      assert.ok(!refused.ok && /delegatecall/.test(refused.reason));
      assert.equal(checkPolicyRules(both, facts(delegate, kind))?.rule, 'undecodableCall');
    }
  });

  test('abstractjs Nexus 1.3: encodeExecuteComposable with a static target, raw and runtime arguments', async () => {
    const account = await nexus(MEEVersion.V2_2_1);
    const raw = (paramType: number, paramData: Hex) => ({
      paramType,
      fetcherType: InputParamFetcherType.RAW_BYTES,
      paramData,
      constraints: [],
    });
    const args = `0x${transfer.slice(10)}` as Hex;
    const balanceOfUser = {
      paramType: InputParamType.CALL_DATA,
      fetcherType: InputParamFetcherType.BALANCE,
      paramData: concat([TOKEN, USER]),
      constraints: [],
    };
    const callData = await account.encodeExecuteComposable([
      {
        functionSig: '0xa9059cbb',
        inputParams: [raw(InputParamType.TARGET, pad(TOKEN)), raw(InputParamType.CALL_DATA, args)],
        outputParams: [],
      },
      {
        functionSig: '0x095ea7b3',
        inputParams: [raw(InputParamType.TARGET, pad(NFT)), raw(InputParamType.CALL_DATA, pad(USER)), balanceOfUser],
        outputParams: [],
      },
    ]);
    assert.deepEqual(check(callData, 'nexusV13'), {
      calls: [
        [TOKEN, 0n, transfer],
        [NFT, 0n, '0x095ea7b3'],
      ],
      onlyTransfer: 'contractNotAllowed',
      both: undefined,
    });
    assert.equal(decodeAccountCalls(callData, 'nexusV12').ok, false, 'not a method of Nexus 1.2.0');
    const fetchedTarget = await account.encodeExecuteComposable([
      {
        functionSig: '0xa9059cbb',
        inputParams: [
          {
            paramType: InputParamType.TARGET,
            fetcherType: InputParamFetcherType.STATIC_CALL,
            paramData: encodeAbiParameters([{ type: 'address' }, { type: 'bytes' }], [NFT, '0x12345678']),
            constraints: [],
          },
          raw(InputParamType.CALL_DATA, args),
        ],
        outputParams: [],
      },
    ]);
    const r = decodeAccountCalls(fetchedTarget, 'nexusV13');
    assert.ok(!r.ok && /target fetched at run time/.test(r.reason));
  });

  test("viem's Coinbase Smart Wallet v1 and v1.1: encodeCalls of one call and of two", async () => {
    const client = createClient({ chain: base, transport: transport() });
    for (const version of ['1', '1.1'] as const) {
      const account = await toCoinbaseSmartAccount({ client, owners: [owner], version, address: USER });
      assert.deepEqual(check(await account.encodeCalls([...one]), 'coinbaseSmartWallet'), {
        calls: ONE,
        onlyTransfer: undefined,
        both: undefined,
      });
      assert.deepEqual(check(await account.encodeCalls([...two]), 'coinbaseSmartWallet').calls, TWO);
    }
  });

  test("permissionless's Kernel 0.3.1 and Light Account 2.0.0: encodeCalls of one call and of two", async () => {
    const client = createClient({ chain: base, transport: transport() });
    const entryPoint = { address: entryPoint07Address, version: '0.7' } as const;
    const kernel = await toKernelSmartAccount({ client, owners: [owner], version: '0.3.1', entryPoint, address: USER });
    assert.deepEqual(check(await kernel.encodeCalls([...one]), 'kernelV3').calls, ONE);
    assert.deepEqual(check(await kernel.encodeCalls([...two]), 'kernelV3').calls, TWO);
    const light = await toLightSmartAccount({ client, owner, version: '2.0.0', entryPoint, address: USER });
    assert.deepEqual(check(await light.encodeCalls([...one]), 'lightAccount').calls, ONE);
    assert.deepEqual(check(await light.encodeCalls([...two]), 'lightAccount').calls, TWO);
  });
});

describe('the SDKs’ addresses are the canonical facts', () => {
  test("abstractjs's MEE configurations name the Nexus implementations, factories and bootstraps listed", () => {
    const listed = (v: MEEVersion, line: (typeof NEXUS)['v12'] | (typeof NEXUS)['v13']) => {
      const c = DEFAULT_CONFIGURATIONS_BY_MEE_VERSION[v];
      assert.ok((line.implementations as readonly string[]).includes(c.implementationAddress), `${v} implementation`);
      assert.ok((line.factories as readonly string[]).includes(c.factoryAddress), `${v} factory`);
      assert.ok((line.bootstraps as readonly string[]).includes(c.bootStrapAddress), `${v} bootstrap`);
    };
    listed(MEEVersion.V2_0_0, NEXUS.v12);
    listed(MEEVersion.V2_1_0, NEXUS.v12);
    listed(MEEVersion.V2_2_1, NEXUS.v13);
    listed(MEEVersion.V2_3_0, NEXUS.v13);
    listed(MEEVersion.V3_0_0, NEXUS.v13);
  });

  test("viem's Coinbase factories are the ones listed", async () => {
    const client = createClient({ chain: base, transport: transport() });
    for (const version of ['1', '1.1'] as const) {
      const account = await toCoinbaseSmartAccount({ client, owners: [owner], version, address: USER });
      const { factory } = await account.getFactoryArgs();
      assert.ok(
        COINBASE_SMART_WALLET.factories.some((f) => f.toLowerCase() === factory?.toLowerCase()),
        `${version}: ${factory}`,
      );
    }
    // The factory's data: createAccount(bytes[] owners, uint256 nonce), nothing naming an implementation.
    const account = await toCoinbaseSmartAccount({ client, owners: [owner], version: '1.1', address: USER });
    const { factoryData } = await account.getFactoryArgs();
    const abi = parseAbi(['function createAccount(bytes[] owners, uint256 nonce)']);
    assert.equal(decodeFunctionData({ abi, data: factoryData ?? '0x' }).functionName, 'createAccount');
  });
});
