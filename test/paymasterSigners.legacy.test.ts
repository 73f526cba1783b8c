import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type Address, getAddress, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { isPaymasterSigner, readPaymasterSigners } from '../src/chain/paymasterSigners.js';
import { KEYS, type PatronFixture, startPatronFixture } from './helpers/patronPaymasterV06.js';

/**
 * A paymaster deployed before signer sets answers `verifyingSigner()` and no `signers()`: the service reads it as
 * a set of one (paymasterSigners.ts), so an operator upgrading Patron need not redeploy. The old contract's
 * interface is compiled here (solc from npm) as its one storage variable, which is all the service reads of it.
 */
const LEGACY_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
contract LegacySignerPaymaster {
    address public verifyingSigner;
    constructor(address signer) { verifyingSigner = signer; }
}`;

const requireCjs = createRequire(import.meta.url);
// solc ships no types: its one function used here takes and returns standard JSON as text.
const solc = requireCjs('solc') as { compile(input: string): string };

function compileLegacy(): Hex {
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'Legacy.sol': { content: LEGACY_SOURCE } },
        settings: { outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
      }),
    ),
  ) as { contracts: { 'Legacy.sol': { LegacySignerPaymaster: { evm: { bytecode: { object: string } } } } } };
  return `0x${output.contracts['Legacy.sol'].LegacySignerPaymaster.evm.bytecode.object}`;
}

describe('a paymaster from before signer sets', () => {
  let fx: PatronFixture;
  let legacy: Address;
  const signer = privateKeyToAccount(KEYS.signer).address;
  before(async () => {
    fx = await startPatronFixture();
    const hash = await fx.client.deployContract({
      abi: parseAbi(['constructor(address signer)']),
      bytecode: compileLegacy(),
      args: [signer],
    });
    const receipt = await fx.client.waitForTransactionReceipt({ hash });
    assert.ok(receipt.contractAddress);
    legacy = getAddress(receipt.contractAddress);
  });
  after(() => fx?.close());

  test('its one verifyingSigner is read as a set of one, marked legacy; the current contract as a set', async () => {
    assert.deepEqual(await readPaymasterSigners({ client: fx.client, paymaster: legacy }), {
      signers: [signer],
      legacy: true,
    });
    const chain = { client: fx.client, paymaster: legacy };
    assert.equal(await isPaymasterSigner({ chain, signer }), true);
    assert.equal(await isPaymasterSigner({ chain, signer: privateKeyToAccount(KEYS.stranger).address }), false);
    assert.deepEqual(await readPaymasterSigners({ client: fx.client, paymaster: fx.paymaster }), {
      signers: [signer],
      legacy: false,
    });
  });

  test('a contract with neither is not a Patron paymaster: the read rejects', async () => {
    await assert.rejects(readPaymasterSigners({ client: fx.client, paymaster: fx.entryPoint }));
    await assert.rejects(isPaymasterSigner({ chain: { client: fx.client, paymaster: fx.entryPoint }, signer }));
  });
});
