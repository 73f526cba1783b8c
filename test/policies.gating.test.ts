import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  createPublicClient,
  custom,
  encodeFunctionData,
  type Hex,
  keccak256,
  parseAbi,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import { entryPoint06Abi } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainRuntime } from '../src/chain/chainRegistry.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { createGatingReads, type GatingReads } from '../src/chain/gatingReads.js';
import { PolicyDeniedError } from '../src/errors/PatronError.js';
import { checkGatingRules, type GatingFacts } from '../src/policies/gatingRules.js';
import { createPolicyGate, type PolicyRequest } from '../src/policies/policyGate.js';
import { type Policy, policyRulesSchema } from '../src/policies/policySchema.js';
import {
  deployGatingContracts,
  easAbi,
  type GatingContracts,
  schemaRegistryAbi,
  testMultiTokenAbi,
  testNftAbi,
} from './helpers/gatingContracts.js';
import {
  KEYS,
  mintToken,
  type PatronFixture,
  paymasterDeposit,
  signAccount,
  simpleAccountFactoryAbi,
  submitHandleOps,
  testKey,
} from './helpers/patronPaymasterV06.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * The gating rules (docs/guides/policies.md, "Gating rules") on the in-process chain against real contracts:
 * OpenZeppelin's ERC-721 and ERC-1155, the DevToken ERC-20 and EAS 1.9.0 (SchemaRegistry + EAS, compiled from their
 * sources: helpers/gatingContracts.ts). Each rule's pass and denials with their data, every way an attestation can
 * fail, the cache (one eth_call for repeated and concurrent reads, a new one after the TTL, none across chains, none
 * kept for a failed read), fail-closed reads of a reverting contract and of an address without code, the cheap rules
 * first, and a sponsored op a gating rule admits, included by handleOps.
 */

let app: RpcFixture;
let fx: PatronFixture;
let c: GatingContracts;
let erc20: Address;
let schemaUid: Hex;
let otherSchemaUid: Hex;
const attester = () => fx.client.account.address;
const holder = privateKeyToAccount(testKey('gating-holder')).address;
const nobody = privateKeyToAccount(testKey('gating-nobody')).address;

/** eth_calls and eth_getBalance made through this chain view (a second view of the same chain, counted). */
let reads = 0;
let countedChain: Pick<ChainRuntime, 'chainId' | 'client'>;

async function registerSchema(schema: string): Promise<Hex> {
  const hash = await fx.client.writeContract({
    address: c.schemaRegistry,
    abi: schemaRegistryAbi,
    functionName: 'register',
    args: [schema, zeroAddress, true],
  });
  await waitForSuccess(fx.client, hash, 'schema registration');
  // SchemaRegistry's uid: keccak256(abi.encodePacked(schema, resolver, revocable)).
  return keccak256(
    `0x${Buffer.concat([Buffer.from(schema), Buffer.from(zeroAddress.slice(2), 'hex'), Buffer.from([1])]).toString('hex')}`,
  );
}

async function attest(args: {
  readonly schema?: Hex;
  readonly recipient: Address;
  readonly expirationTime?: bigint;
  readonly by?: 'owner' | 'stranger';
}): Promise<Hex> {
  const client = args.by === 'stranger' ? fx.stranger : fx.client;
  const hash = await client.writeContract({
    address: c.eas,
    abi: easAbi,
    functionName: 'attest',
    args: [
      {
        schema: args.schema ?? schemaUid,
        data: {
          recipient: args.recipient,
          expirationTime: args.expirationTime ?? 0n,
          revocable: true,
          refUID: `0x${'0'.repeat(64)}`,
          data: '0x',
          value: 0n,
        },
      },
    ],
  });
  const receipt = await waitForSuccess(fx.client, hash, 'attestation');
  const [event] = parseEventLogs({ abi: easAbi, eventName: 'Attested', logs: receipt.logs });
  assert.ok(event);
  return event.args.uid;
}

const chainNowS = async () => Number((await fx.client.getBlock()).timestamp);

before(async () => {
  app = await startRpcFixture();
  fx = app.fx;
  c = await deployGatingContracts(fx.client);
  erc20 = fx.tokens[0]?.address ?? zeroAddress;
  schemaUid = await registerSchema('bool isHuman');
  otherSchemaUid = await registerSchema('uint256 score');
  countedChain = {
    chainId: fx.chain.chainId,
    client: createPublicClient({
      transport: custom(
        {
          request: (r: { method: string; params?: unknown }) => {
            if (r.method === 'eth_call' || r.method === 'eth_getBalance') reads++;
            return fx.chain.request(r as Parameters<typeof fx.chain.request>[0]);
          },
        },
        // One request per read, so the counts are eth_calls (viem's default would retry a revert three times).
        { retryCount: 0 },
      ),
    }),
  };
});
after(() => app.close());

function policyOf(rules: unknown, name = 'gated'): Policy {
  return { id: `p-${name}`, name, active: true, rules: policyRulesSchema.parse(rules) };
}

/** checkGatingRules on the real chain, through a fresh cache (or the given one). */
function judge(
  rules: unknown,
  facts: Partial<GatingFacts> & { readonly nowS?: number } = {},
  gating: GatingReads = createGatingReads({ ttlMs: 30_000 }),
) {
  const { nowS, ...rest } = facts;
  return checkGatingRules(policyOf(rules), {
    sender: holder,
    userAddress: undefined,
    attestationUid: undefined,
    nowMs: (nowS ?? Math.floor(Date.now() / 1000)) * 1000,
    reader: {
      balance: (call) => gating.balance(countedChain, call),
      attestation: (args) => gating.attestation(countedChain, args),
    },
    ...rest,
  });
}

describe('schema', () => {
  test('each rule is validated with a message that names the fix', () => {
    const problem = (rules: unknown) => {
      const r = policyRulesSchema.safeParse(rules);
      assert.equal(r.success, false, JSON.stringify(rules));
      return `${r.error?.issues[0]?.path.join('.')}: ${r.error?.issues[0]?.message}`;
    };
    const uid = `0x${'ab'.repeat(32)}`;
    assert.match(problem({ attestation: { eas: holder, schema: uid, attesters: [] } }), /at least one attester/);
    assert.match(problem({ attestation: { eas: holder, schema: '0x12', attesters: [holder] } }), /32-byte/);
    assert.match(
      problem({ attestation: { eas: holder, schema: uid, attesters: Array(11).fill(holder) } }),
      /at most 10/,
    );
    assert.match(problem({ nft: { standard: 'erc1155', contract: holder } }), /tokenId: an erc1155 rule names/);
    assert.match(problem({ nft: { standard: 'erc721', contract: holder, tokenId: '1' } }), /leave tokenId out/);
    assert.match(problem({ nft: { standard: 'erc721', contract: holder, minCount: '0' } }), /at least 1/);
    assert.match(problem({ nft: { standard: 'erc20', contract: holder } }), /"erc721" or "erc1155"/);
    assert.match(problem({ minBalance: { token: 'eth', min: '1' } }), /ERC-20 address or "native"/);
    assert.match(problem({ minBalance: { token: 'native', min: '1.5' } }), /decimal string/);
    assert.match(problem({ minBalance: { token: 'native', min: '1', subject: 'owner' } }), /"sender" or "user"/);
    const ok = policyRulesSchema.parse({ nft: { standard: 'erc721', contract: holder } });
    assert.equal(ok.nft?.minCount, 1n);
    assert.equal(ok.nft?.subject, 'sender');
  });
});

describe('nft', () => {
  test('ERC-721: denied with the count held, then passes once minted', async () => {
    const rules = { nft: { standard: 'erc721', contract: c.nft } };
    const d = await judge(rules, { sender: nobody });
    assert.equal(d?.rule, 'nftMissing');
    assert.deepEqual(
      { reason: d?.reason, count: d?.count, minCount: d?.minCount, holder: d?.holder, contract: d?.contract },
      { reason: 'tooFew', count: '0', minCount: '1', holder: nobody, contract: c.nft },
    );
    await waitForSuccess(
      fx.client,
      await fx.client.writeContract({ address: c.nft, abi: testNftAbi, functionName: 'mint', args: [holder, 1n] }),
      'mint',
    );
    assert.equal(await judge(rules), undefined);
    const two = await judge({ nft: { standard: 'erc721', contract: c.nft, minCount: '2' } });
    assert.equal(two?.reason, 'tooFew');
    assert.equal(two?.count, '1');
  });

  test('ERC-1155: the token id counted, at least minCount', async () => {
    await waitForSuccess(
      fx.client,
      await fx.client.writeContract({
        address: c.multiToken,
        abi: testMultiTokenAbi,
        functionName: 'mint',
        args: [holder, 7n, 2n],
      }),
      'mint 1155',
    );
    const rule = (tokenId: string, minCount: string) => ({
      nft: { standard: 'erc1155', contract: c.multiToken, tokenId, minCount },
    });
    assert.equal(await judge(rule('7', '2')), undefined);
    const d = await judge(rule('7', '3'));
    assert.deepEqual(
      [d?.rule, d?.reason, d?.tokenId, d?.count, d?.standard],
      ['nftMissing', 'tooFew', '7', '2', 'erc1155'],
    );
    assert.equal((await judge(rule('8', '1')))?.count, '0', 'another id is not counted');
  });

  test('a reverting contract or an address without code denies (readFailed), and is not cached', async () => {
    const gating = createGatingReads({ ttlMs: 30_000 });
    for (const contract of [c.reverter, nobody]) {
      reads = 0;
      const rules = { nft: { standard: 'erc721', contract } };
      const d = await judge(rules, {}, gating);
      assert.equal(d?.rule, 'nftMissing');
      assert.equal(d?.reason, 'readFailed');
      await judge(rules, {}, gating);
      assert.equal(reads, 2, 'a failed read is asked again');
    }
    const balance = await judge({ minBalance: { token: c.reverter, min: '1' } }, {}, gating);
    assert.deepEqual([balance?.rule, balance?.reason, balance?.balance], ['balanceTooLow', 'readFailed', undefined]);
  });
});

describe('minBalance', () => {
  test('ERC-20 and native: denied with token, min and balance; passes at the minimum', async () => {
    await mintToken(fx, erc20, holder, 500n);
    assert.equal(await judge({ minBalance: { token: erc20, min: '500' } }), undefined);
    const d = await judge({ minBalance: { token: erc20, min: '501' } });
    assert.deepEqual(
      { rule: d?.rule, token: d?.token, min: d?.min, balance: d?.balance, reason: d?.reason },
      { rule: 'balanceTooLow', token: erc20, min: '501', balance: '500', reason: 'tooLow' },
    );
    await fx.client.setBalance({ address: holder, value: 10n ** 18n });
    assert.equal(await judge({ minBalance: { token: 'native', min: (10n ** 18n).toString() } }), undefined);
    const n = await judge({ minBalance: { token: 'native', min: '1' } }, { sender: nobody });
    assert.deepEqual([n?.token, n?.balance], ['native', '0']);
  });

  test("subject 'user': the token's address claim, or noUserAddress without one", async () => {
    const rules = { minBalance: { token: erc20, min: '1', subject: 'user' } };
    const d = await judge(rules, { sender: holder });
    assert.deepEqual([d?.rule, d?.reason, d?.subject], ['balanceTooLow', 'noUserAddress', 'user']);
    assert.equal(await judge(rules, { sender: nobody, userAddress: holder }), undefined);
  });
});

describe('attestation (EAS 1.9.0)', () => {
  const rule = (extra: Record<string, unknown> = {}) => ({
    attestation: { eas: c.eas, schema: schemaUid, attesters: [attester()], ...extra },
  });

  test('a valid attestation passes; without a uid the denial says where to put it', async () => {
    const uid = await attest({ recipient: holder });
    assert.equal(await judge(rule(), { attestationUid: uid }), undefined);
    const d = await judge(rule());
    assert.deepEqual(
      { rule: d?.rule, reason: d?.reason, eas: d?.eas, schema: d?.schema, uid: d?.uid },
      { rule: 'attestationMissing', reason: 'noAttestationUid', eas: c.eas, schema: schemaUid, uid: undefined },
    );
    assert.match(d?.message ?? '', /attestationUid/);
  });

  test('every way an attestation fails is denied with its reason', async () => {
    const now = await chainNowS();
    const cases: [string, Hex, Partial<GatingFacts> & { nowS?: number }, Record<string, unknown>][] = [
      ['notFound', `0x${'12'.repeat(32)}`, {}, {}],
      ['wrongSchema', await attest({ schema: otherSchemaUid, recipient: holder }), {}, {}],
      ['wrongAttester', await attest({ recipient: holder, by: 'stranger' }), {}, {}],
      ['wrongRecipient', await attest({ recipient: nobody }), {}, {}],
      ['expired', await attest({ recipient: holder, expirationTime: BigInt(now + 100) }), { nowS: now + 100 }, {}],
      ['tooOld', await attest({ recipient: holder }), { nowS: now + 1000 }, { maxAgeSeconds: 600 }],
    ];
    const revoked = await attest({ recipient: holder });
    await waitForSuccess(
      fx.client,
      await fx.client.writeContract({
        address: c.eas,
        abi: easAbi,
        functionName: 'revoke',
        args: [{ schema: schemaUid, data: { uid: revoked, value: 0n } }],
      }),
      'revoke',
    );
    cases.push(['revoked', revoked, {}, {}]);
    for (const [reason, uid, facts, extra] of cases) {
      const d = await judge(rule(extra), { attestationUid: uid, ...facts });
      assert.equal(d?.rule, 'attestationMissing', reason);
      assert.equal(d?.reason, reason, d?.message);
      assert.equal(d?.uid, uid);
    }
    // The same attestations pass where they should: before expiry, within maxAge, a trusted second attester.
    assert.equal(await judge(rule(), { attestationUid: cases[4]?.[1], nowS: now + 99 }), undefined);
    assert.equal(await judge(rule({ maxAgeSeconds: 600 }), { attestationUid: cases[5]?.[1] }), undefined);
    const both = rule({ attesters: [attester(), fx.stranger.account.address] });
    assert.equal(await judge(both, { attestationUid: cases[2]?.[1] }), undefined);
  });

  test('an address that is not EAS denies with readFailed', async () => {
    const d = await judge(
      { attestation: { eas: c.reverter, schema: schemaUid, attesters: [attester()] } },
      { attestationUid: schemaUid },
    );
    assert.deepEqual([d?.rule, d?.reason], ['attestationMissing', 'readFailed']);
  });
});

describe('the cache', () => {
  test('a second read makes no eth_call; after the TTL it reads again; concurrent reads make one', async () => {
    let t = 1_000_000;
    const gating = createGatingReads({ ttlMs: 30_000, now: () => t });
    const rules = { minBalance: { token: erc20, min: '1' } };
    reads = 0;
    assert.equal(await judge(rules, {}, gating), undefined);
    assert.equal(reads, 1);
    await judge(rules, {}, gating);
    assert.equal(reads, 1, 'served from the cache');
    t += 30_001;
    await judge(rules, {}, gating);
    assert.equal(reads, 2, 'read again after the TTL');
    reads = 0;
    const fresh = createGatingReads({ ttlMs: 30_000, now: () => t });
    await Promise.all(Array.from({ length: 10 }, () => judge(rules, {}, fresh)));
    assert.equal(reads, 1, 'ten concurrent requests, one eth_call');
    // Another chain id is another key: never an answer of this chain.
    const other = { ...countedChain, chainId: countedChain.chainId + 1 };
    reads = 0;
    await fresh.balance(other, { kind: 'erc20', contract: erc20, owner: holder });
    assert.equal(reads, 1);
  });

  test('the trade-off: an NFT moved to a second wallet still counts for the first until its answer expires', async () => {
    let t = 2_000_000;
    const gating = createGatingReads({ ttlMs: 30_000, now: () => t });
    const farmerAccount = privateKeyToAccount(testKey('gating-farmer'));
    const farmer = farmerAccount.address;
    const second = privateKeyToAccount(testKey('gating-second-wallet')).address;
    await fx.client.setBalance({ address: farmer, value: 10n ** 18n });
    await waitForSuccess(
      fx.client,
      await fx.client.writeContract({ address: c.nft, abi: testNftAbi, functionName: 'mint', args: [farmer, 77n] }),
      'mint',
    );
    const rules = { nft: { standard: 'erc721', contract: c.nft } };
    assert.equal(await judge(rules, { sender: farmer }, gating), undefined);
    const moved = await fx.client.writeContract({
      account: farmerAccount,
      address: c.nft,
      abi: testNftAbi,
      functionName: 'transferFrom',
      args: [farmer, second, 77n],
    });
    await waitForSuccess(fx.client, moved, 'transfer');
    assert.equal(await judge(rules, { sender: second }, gating), undefined, 'the second wallet holds it now');
    assert.equal(await judge(rules, { sender: farmer }, gating), undefined, 'the first still passes: cached');
    t += 30_001;
    assert.equal((await judge(rules, { sender: farmer }, gating))?.reason, 'tooFew', 'read again after the TTL');
  });

  test('a cheap rule that denies means no chain read at all', async () => {
    const policy = policyOf({ senders: { block: [holder] }, nft: { standard: 'erc721', contract: c.nft } });
    const gate = createPolicyGate({
      policiesOf: async () => ({ policies: [policy], version: 1 }),
      ledger: {
        reserve: async () => ({ ok: true }),
        counters: async () => new Map(),
      },
      nativeUsdMicros: () => undefined,
      now: Date.now,
    });
    const gating = createGatingReads({ ttlMs: 30_000 });
    const request = (sender: Address): PolicyRequest => ({
      dappId: 'd',
      chainId: countedChain.chainId,
      sender,
      initCode: '0x',
      callData: '0x',
      maxFeePerGas: 1n,
      requestedPolicyId: undefined,
      gating: {
        balance: (call) => gating.balance(countedChain, call),
        attestation: (args) => gating.attestation(countedChain, args),
      },
    });
    reads = 0;
    await assert.rejects(gate.check(request(holder)), (e: unknown) => {
      assert.ok(e instanceof PolicyDeniedError);
      assert.equal(e.rule, 'senderBlocked');
      return true;
    });
    assert.equal(reads, 0, 'the blocked sender cost no eth_call');
    await assert.rejects(
      gate.check(request(nobody)),
      (e: unknown) => e instanceof PolicyDeniedError && e.rule === 'nftMissing',
    );
    assert.equal(reads, 1);
  });
});

describe('through the app', () => {
  const simpleAccountV06 = parseAbi(['function execute(address dest, uint256 value, bytes func)']);
  const sponsor = (tenant: Tenant, op: Parameters<typeof biconomyWireOp>[0], mode: Record<string, unknown>) =>
    app.rpc(
      'pm_sponsorUserOperation',
      [biconomyWireOp(op), { mode: 'SPONSORED', calculateGasLimits: false, ...mode }],
      {
        apiKey: tenant.apiKey,
      },
    );

  test('an op whose sender holds the NFT and the attestation is sponsored and included; a stranger is denied', async () => {
    const tenant = await createTenant(app.ctx.deps);
    const owner = privateKeyToAccount(KEYS.accountOwner).address;
    const args = [owner, 9001n] as const;
    const sender = await fx.client.readContract({
      address: fx.simpleAccountFactory,
      abi: simpleAccountFactoryAbi,
      functionName: 'getAddress',
      args,
    });
    await waitForSuccess(
      fx.client,
      await fx.bundler.writeContract({
        address: fx.simpleAccountFactory,
        abi: simpleAccountFactoryAbi,
        functionName: 'createAccount',
        args,
      }),
      'SimpleAccount',
    );
    await app.ctx.deps.policies.create({
      dappId: tenant.dappId,
      name: 'holders',
      rules: {
        nft: { standard: 'erc721', contract: c.nft },
        attestation: { eas: c.eas, schema: schemaUid, attesters: [attester()] },
      },
    });
    const nonce = await fx.client.readContract({
      address: fx.entryPoint,
      abi: entryPoint06Abi,
      functionName: 'getNonce',
      args: [sender, 0n],
    });
    const op = {
      sender,
      nonce,
      initCode: '0x' as Hex,
      callData: encodeFunctionData({ abi: simpleAccountV06, functionName: 'execute', args: [holder, 0n, '0x'] }),
      callGasLimit: 100_000n,
      verificationGasLimit: 100_000n,
      preVerificationGas: 50_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      paymasterAndData: '0x' as Hex,
      signature: '0x' as Hex,
    };
    await waitForSuccess(
      fx.client,
      await fx.client.writeContract({ address: c.nft, abi: testNftAbi, functionName: 'mint', args: [sender, 2n] }),
      'mint',
    );
    const uid = await attest({ recipient: sender });
    const missing = await sponsor(tenant, op, {});
    assert.equal(missing.body.error?.code, -32012, JSON.stringify(missing.body));
    const data = missing.body.error?.data as Record<string, unknown>;
    assert.deepEqual(
      [data.rule, data.reason, data.eas, data.schema, data.holder],
      ['attestationMissing', 'noAttestationUid', c.eas, schemaUid, sender],
    );
    const r = await sponsor(tenant, op, { attestationUid: uid });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const signed = await signAccount(fx, { ...op, paymasterAndData: r.body.result?.paymasterAndData as Hex });
    const depositBefore = await paymasterDeposit(fx);
    const { events } = await submitHandleOps(fx, [signed]);
    assert.equal(events[0]?.args.success, true);
    assert.equal(depositBefore - (await paymasterDeposit(fx)), events[0]?.args.actualGasCost);

    // A sender without the NFT, on a policy with the NFT rule alone: the denial's data on the wire.
    const other = await createTenant(app.ctx.deps);
    await app.ctx.deps.policies.create({
      dappId: other.dappId,
      name: 'nft only',
      rules: { nft: { standard: 'erc721', contract: c.nft } },
    });
    const denied = await sponsor(other, { ...op, sender: nobody, nonce: 0n }, {});
    assert.equal(denied.body.error?.code, -32012, JSON.stringify(denied.body));
    const d = denied.body.error?.data as Record<string, unknown>;
    assert.deepEqual(
      [d.rule, d.reason, d.count, d.minCount, d.holder, d.standard],
      ['nftMissing', 'tooFew', '0', '1', nobody, 'erc721'],
    );
  });

  test('a malformed attestationUid is refused as invalid params, in the mode object and in Pimlico’s context', async () => {
    const op = {
      sender: nobody,
      nonce: 0n,
      initCode: '0x' as Hex,
      callData: '0x' as Hex,
      callGasLimit: 100_000n,
      verificationGasLimit: 100_000n,
      preVerificationGas: 50_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      paymasterAndData: '0x' as Hex,
      signature: '0x' as Hex,
    };
    const biconomy = await sponsor(app.tenant, op, { attestationUid: '0x1234' });
    assert.equal(biconomy.body.error?.code, -32602, JSON.stringify(biconomy.body));
    assert.match(biconomy.body.error?.message ?? '', /attestationUid.*32-byte 0x hex string/);
    const pimlico = await app.rpc('pm_sponsorUserOperation', [
      biconomyWireOp(op),
      fx.entryPoint,
      { attestationUid: 'not hex' },
    ]);
    assert.equal(pimlico.body.error?.code, -32602, JSON.stringify(pimlico.body));
    assert.match(pimlico.body.error?.message ?? '', /attestationUid.*32-byte 0x hex string/);
  });
});
