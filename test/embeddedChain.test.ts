import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Hex, parseEther } from 'viem';
import { entryPoint06Address } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { createDevClient } from '../src/chain/devClient.js';
import { createEmbeddedChain, EmbeddedChainRpcError } from '../src/chain/embeddedChain.js';
import { deployEntryPointV06 } from '../src/chain/entryPoints.js';

const account = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');

/** Runs `request` and returns the EmbeddedChainRpcError it throws. */
async function rpcError(promise: Promise<unknown>): Promise<EmbeddedChainRpcError> {
  const err = await promise.then(
    () => assert.fail('expected an RPC error'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof EmbeddedChainRpcError, String(err));
  return err;
}

describe('embedded chain (EDR)', () => {
  it('boots with the requested chain id and funds the given accounts', async () => {
    const chain = await createEmbeddedChain({ chainId: 1337, fundedAccounts: [account.address], balance: 5n });
    assert.equal(await chain.request({ method: 'eth_chainId' }), '0x539');
    assert.equal(await chain.request({ method: 'eth_getBalance', params: [account.address, 'latest'] }), '0x5');
    await chain.close();
  });

  it('reshapes a revert like geth (code 3, revert data as a hex string) so viem can decode it', async () => {
    const chain = await createEmbeddedChain({ fundedAccounts: [] });
    const target = '0x00000000000000000000000000000000000000aa';
    // Runtime code: revert(28, 4) with memory word 0xdeadbeef, i.e. revert data 0xdeadbeef.
    await chain.request({ method: 'hardhat_setCode', params: [target, '0x63deadbeef6000526004601cfd'] });
    const err = await rpcError(chain.request({ method: 'eth_call', params: [{ to: target, data: '0x' }, 'latest'] }));
    assert.equal(err.code, 3);
    assert.equal(err.data, '0xdeadbeef');
    assert.match(err.message, /^execution reverted/);
  });

  it('passes other errors through with their JSON-RPC code', async () => {
    const chain = await createEmbeddedChain({ fundedAccounts: [] });
    const err = await rpcError(chain.request({ method: 'eth_noSuchMethod' }));
    assert.notEqual(err.code, 3);
    assert.ok(err.code < 0, `JSON-RPC error code, got ${err.code}`);
  });

  it('rejects requests after close with EIP-1193 code 4900', async () => {
    const chain = await createEmbeddedChain({ fundedAccounts: [] });
    await chain.close();
    assert.equal((await rpcError(chain.request({ method: 'eth_chainId' }))).code, 4900);
  });

  it('deploys EntryPoint v0.6 at its canonical address, idempotently', async () => {
    const chain = await createEmbeddedChain({ fundedAccounts: [account.address] });
    const client = createDevClient({ chain, account });
    assert.equal(await deployEntryPointV06(client), entryPoint06Address);
    const code = await client.getCode({ address: entryPoint06Address });
    assert.ok(code !== undefined && code.length > 2);
    const block = await client.getBlockNumber();
    assert.equal(await deployEntryPointV06(client), entryPoint06Address);
    assert.equal(await client.getBlockNumber(), block, 'the second call sends no transaction');
    // Snapshots work through the dev client (the contract tests rely on them).
    const balance = await client.getBalance({ address: account.address });
    const id: Hex = await client.snapshot();
    await client.setBalance({ address: account.address, value: parseEther('1') });
    await client.revert({ id });
    assert.equal(await client.getBalance({ address: account.address }), balance);
  });
});
