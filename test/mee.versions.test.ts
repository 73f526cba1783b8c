import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_CONFIGURATIONS_BY_MEE_VERSION } from '@biconomy/abstractjs';
import { getAddress } from 'viem';
import { NEXUS } from '../src/chain/nexusAccounts.js';
import { laneOfNonce, MEE_VERSIONS, meeNonceKey } from '../src/mee/meeVersions.js';

describe('the MEE versions a tank may be pinned to', () => {
  test("each is abstractjs 1.2.3's configuration: its validator, and a Nexus line whose implementation it names", () => {
    const configs = DEFAULT_CONFIGURATIONS_BY_MEE_VERSION as Record<
      string,
      { validatorAddress: string; implementationAddress: string }
    >;
    for (const [version, v] of Object.entries(MEE_VERSIONS)) {
      const c = configs[version];
      assert.ok(c !== undefined, `abstractjs has no MEE ${version}`);
      assert.equal(v.validator, getAddress(c.validatorAddress), version);
      const line = v.kind === 'nexusV12' ? NEXUS.v12 : NEXUS.v13;
      assert.ok(
        (line.implementations as readonly string[]).includes(getAddress(c.implementationAddress)),
        `${version}: ${c.implementationAddress} is not a ${v.kind} implementation`,
      );
    }
  });

  test('a nonce key is lane ‖ 0x00 ‖ validator, and only that layout gives its lane back', () => {
    const validator = MEE_VERSIONS['2.2.1'].validator;
    const key = meeNonceKey({ lane: 0xabcdef, validator });
    assert.equal(key.toString(16).padStart(48, '0'), `abcdef00${validator.slice(2).toLowerCase()}`);
    assert.equal(laneOfNonce({ nonce: (key << 64n) | 5n, validator }), 0xabcdef);
    assert.equal(laneOfNonce({ nonce: (key << 64n) | 5n, validator: MEE_VERSIONS['2.0.0'].validator }), undefined);
    assert.equal(laneOfNonce({ nonce: ((key | (1n << 160n)) << 64n) | 5n, validator }), undefined);
  });
});
