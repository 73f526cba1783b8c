import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getAddress } from 'viem';
import { ValidationError } from '../errors/PatronError.js';
import { TANK_MEE_VERSIONS } from './meeVersions.js';
import { chooseTankAddress } from './tankAddress.js';
import { tankMeeConfig } from './tankMeeConfig.js';

const owner = '0x00000000000000000000000000000000000000aa';
const computed = getAddress('0x1234567890abcdef1234567890abcdef12345678');
const base = { owner, chainId: 8453, meeVersion: '2.2.1' } as const;

test('the computed address wins; a given one must equal it, whatever its case', () => {
  assert.deepEqual(chooseTankAddress({ ...base, computed, given: undefined }), { address: computed, computed: true });
  assert.deepEqual(chooseTankAddress({ ...base, computed, given: computed.toLowerCase() as `0x${string}` }), {
    address: computed,
    computed: true,
  });
  assert.throws(
    () => chooseTankAddress({ ...base, computed, given: '0x00000000000000000000000000000000000000bb' }),
    (err: unknown) =>
      err instanceof ValidationError &&
      /is not the tank of owner 0x0+aa at MEE 2\.2\.1 on chain 8453 \(that is 0x1234/.test(err.message),
  );
});

test('without a factory the given address is taken at its word, and none given is refused', () => {
  const given = '0x00000000000000000000000000000000000000bb';
  assert.deepEqual(chooseTankAddress({ ...base, computed: undefined, given }), {
    address: getAddress(given),
    computed: false,
  });
  assert.throws(
    () => chooseTankAddress({ ...base, computed: undefined, given: undefined }),
    /factory has no code on chain 8453.*give it \(--address\)/,
  );
});

test("the versions a tank may pin are the installed SDK's Nexus 1.2 and 1.3 ones, each with its factory", () => {
  assert.deepEqual(TANK_MEE_VERSIONS, ['2.0.0', '2.1.0', '2.2.1', '2.3.0', '3.0.0']);
  assert.equal(tankMeeConfig('2.2.1').factoryAddress, '0x000000002c9A405a196f2dc766F2476B731693c3');
  assert.throws(() => tankMeeConfig('1.1.0'), /MEE version 1\.1\.0 is not one a gas tank can use: 2\.0\.0, /);
});
