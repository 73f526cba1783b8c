import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type Address,
  concat,
  encodeFunctionData,
  getAddress,
  type Hex,
  hashDomain,
  maxUint256,
  numberToHex,
  parseEther,
  parseEventLogs,
  parseSignature,
  slice,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devFiatTokenAbi } from '../src/chain/artifacts.js';
import { createDevClient, type DevClient, waitForSuccess } from '../src/chain/devClient.js';
import { createEmbeddedChain, DEV_TOKENS, type DevTokenInfo, deployDevToken } from '../src/chain/embeddedChain.js';
import { deployEntryPoint } from '../src/chain/entryPoints.js';
import { revertOf, testKey } from './helpers/patronPaymasterV06.js';
import {
  delegateEoa,
  deploySimple7702,
  type PermitFields,
  permitTypedData,
  signPermit,
  tracedOpcodes,
} from './helpers/permitSigning.js';

/**
 * contracts/DevFiatToken.sol, the dev chain's USDC, holds the semantics of Circle's FiatToken v2.2 that Patron's
 * permit mode relies on: the bytes-signature permit, no TIMESTAMP at the maximum deadline (ERC-7562 bans it in
 * validation), ECDSA for an owner without code and ERC-1271 for one with code (an EIP-7702 account included), the
 * EIP-712 domain {name, "2", chainId, token}. The 18-decimal dev token has no permit at all.
 */
describe('DevFiatToken (the dev chain’s USDC): Circle FiatToken v2.2’s EIP-2612 permit', () => {
  const ownerKey = testKey('fiat-owner');
  const holderKey = testKey('fiat-holder');
  const eoa7702Key = testKey('fiat-7702');
  const holder = privateKeyToAccount(holderKey);
  const eoa7702 = privateKeyToAccount(eoa7702Key);
  const spender: Address = getAddress('0x00000000000000000000000000000000005be4de');
  let client: DevClient;
  let close: () => Promise<void>;
  let usdc: DevTokenInfo;
  let pdt: DevTokenInfo;
  let chainId: number;

  before(async () => {
    const owner = privateKeyToAccount(ownerKey);
    const chain = await createEmbeddedChain({ fundedAccounts: [owner.address], balance: parseEther('100') });
    close = () => chain.close();
    client = createDevClient({ chain, account: owner });
    chainId = chain.chainId;
    const [usdcSpec, pdtSpec] = DEV_TOKENS;
    usdc = await deployDevToken({ client, ...usdcSpec });
    pdt = await deployDevToken({ client, ...pdtSpec });
    const entryPoint = await deployEntryPoint(client, '0.8');
    await delegateEoa(client, eoa7702, await deploySimple7702(client, '0.8', entryPoint));
  });
  after(() => close?.());

  const read = <F extends 'nonces' | 'allowance'>(
    functionName: F,
    args: F extends 'nonces' ? [Address] : [Address, Address],
  ) =>
    client.readContract({
      address: usdc.address,
      abi: devFiatTokenAbi,
      functionName,
      args,
    } as never) as Promise<bigint>;
  const fields = async (owner: Address, value: bigint, deadline?: bigint): Promise<PermitFields> => ({
    token: usdc.address,
    tokenName: await client.readContract({ address: usdc.address, abi: devFiatTokenAbi, functionName: 'name' }),
    chainId,
    owner,
    spender,
    value,
    nonce: await read('nonces', [owner]),
    ...(deadline === undefined ? {} : { deadline }),
  });
  const permitData = (p: PermitFields, signature: Hex) =>
    encodeFunctionData({
      abi: devFiatTokenAbi,
      functionName: 'permit',
      args: [p.owner, p.spender, p.value, p.deadline ?? maxUint256, signature],
    });
  /** Sends the bytes-form permit from a third party (anyone may submit a permit). */
  async function submit(p: PermitFields, signature: Hex) {
    const hash = await client.sendTransaction({ to: usdc.address, data: permitData(p, signature) });
    return waitForSuccess(client, hash, 'permit');
  }
  const revertReason = (p: PermitFields, signature: Hex) =>
    client
      .simulateContract({
        address: p.token,
        abi: devFiatTokenAbi,
        functionName: 'permit',
        args: [p.owner, p.spender, p.value, p.deadline ?? maxUint256, signature],
      })
      .then(
        () => 'ok',
        (err: unknown) => String(revertOf(err).args[0]),
      );

  it('has USDC’s EIP-712 domain: version() "2", DOMAIN_SEPARATOR() of {name, "2", chainId, the token}', async () => {
    const name = await client.readContract({ address: usdc.address, abi: devFiatTokenAbi, functionName: 'name' });
    assert.equal(name, 'USD Coin (Patron dev chain)');
    assert.equal(
      await client.readContract({ address: usdc.address, abi: devFiatTokenAbi, functionName: 'version' }),
      '2',
    );
    assert.equal(
      await client.readContract({ address: usdc.address, abi: devFiatTokenAbi, functionName: 'DOMAIN_SEPARATOR' }),
      hashDomain({
        domain: { name, version: '2', chainId: BigInt(chainId), verifyingContract: usdc.address },
        types: { EIP712Domain: permitDomainTypes },
      }),
    );
  });

  it('an EOA owner’s permit (bytes form) sets the allowance, emits Approval and moves the nonce; its replay fails', async () => {
    const p = await fields(holder.address, 1_234_567n);
    const signature = await signPermit(holderKey, p);
    const receipt = await submit(p, signature);
    const [approval] = parseEventLogs({ abi: devFiatTokenAbi, logs: receipt.logs, eventName: 'Approval' });
    assert.deepEqual(approval?.args, { owner: holder.address, spender, value: 1_234_567n });
    assert.equal(await read('allowance', [holder.address, spender]), 1_234_567n);
    assert.equal(await read('nonces', [holder.address]), p.nonce + 1n);
    assert.equal(await revertReason(p, signature), 'EIP2612: invalid signature', 'a replay is signed for a used nonce');
  });

  it('the (v, r, s) form checks the same digest', async () => {
    const p = await fields(holder.address, 7n);
    const { v, r, s } = parseSignature(await signPermit(holderKey, p));
    const hash = await client.writeContract({
      address: usdc.address,
      abi: devFiatTokenAbi,
      functionName: 'permit',
      args: [p.owner, p.spender, p.value, maxUint256, Number(v), r, s],
    });
    await waitForSuccess(client, hash, 'permit (v, r, s)');
    assert.equal(await read('allowance', [holder.address, spender]), 7n);
  });

  it('runs no TIMESTAMP at the maximum deadline (ERC-7562 OP-011), reads it for any other, refuses a past one', async () => {
    const at = async (deadline: bigint | undefined) => {
      const p = await fields(holder.address, 1n, deadline);
      const ops = await tracedOpcodes(client, {
        from: client.account.address,
        to: usdc.address,
        data: permitData(p, await signPermit(holderKey, p)),
      });
      return ops.filter((o) => o.op === 'TIMESTAMP').length;
    };
    assert.equal(await at(undefined), 0, 'the maximum deadline short-circuits before TIMESTAMP');
    assert.equal(await at(maxUint256 - 1n), 1, 'any other deadline reads the timestamp');
    const past = await fields(holder.address, 1n, 1n);
    assert.equal(await revertReason(past, await signPermit(holderKey, past)), 'FiatTokenV2: permit is expired');
  });

  it('refuses a permit signed for another spender, value or token, and a malleable (high s) or malformed signature', async () => {
    const p = await fields(holder.address, 100n);
    const forOther = async (change: Partial<PermitFields>) => signPermit(holderKey, { ...p, ...change });
    assert.equal(await revertReason(p, await forOther({ spender: holder.address })), 'EIP2612: invalid signature');
    assert.equal(await revertReason(p, await forOther({ value: 101n })), 'EIP2612: invalid signature');
    assert.equal(await revertReason(p, await forOther({ token: pdt.address })), 'EIP2612: invalid signature');
    assert.equal(await revertReason(p, await forOther({ chainId: chainId + 1 })), 'EIP2612: invalid signature');
    const { r, s, yParity } = parseSignature(await signPermit(holderKey, p));
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = concat([r, numberToHex(n - BigInt(s), { size: 32 }), yParity === 0 ? '0x1c' : '0x1b']);
    assert.equal(await revertReason(p, highS), "ECRecover: invalid signature 's' value");
    assert.equal(await revertReason(p, slice(highS, 0, 64)), 'ECRecover: invalid signature length');
  });

  it('asks an owner with code through ERC-1271 only: an EIP-7702 account’s own signature passes its delegate’s isValidSignature', async () => {
    const p = await fields(eoa7702.address, 55n);
    // Simple7702Account's isValidSignature: ECDSA over the digest by the account's own key.
    await submit(p, await signPermit(eoa7702Key, p));
    assert.equal(await read('allowance', [eoa7702.address, spender]), 55n);
    const q = await fields(eoa7702.address, 56n);
    assert.equal(await revertReason(q, await signPermit(holderKey, q)), 'EIP2612: invalid signature');
    const ops = await tracedOpcodes(client, {
      from: client.account.address,
      to: usdc.address,
      data: permitData(q, await signPermit(eoa7702Key, q)),
    });
    assert.ok(
      ops.some((o) => o.op === 'STATICCALL' && o.depth === 1),
      'the token staticcalls the account (isValidSignature) although its key signed an ECDSA signature',
    );
  });

  it('the typed data of the test helper is the token’s digest (viem signTypedData verifies against it)', async () => {
    const p = await fields(holder.address, 9n);
    const signature = await signPermit(holderKey, p);
    assert.equal(await client.verifyTypedData({ address: holder.address, ...permitTypedData(p), signature }), true);
  });

  it('the 18-decimal dev token (OpenZeppelin’s plain ERC-20) has no permit', async () => {
    const p = { ...(await fields(holder.address, 1n)), token: pdt.address };
    const failed = await client.call({ to: pdt.address, data: permitData(p, '0x') }).then(
      () => false,
      () => true,
    );
    assert.equal(failed, true);
  });
});

const permitDomainTypes = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;
