import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientIpKey } from './clientIpKey.js';

test('IPv4 as is, IPv4-mapped as its IPv4, IPv6 as its /64', () => {
  assert.equal(clientIpKey('203.0.113.7'), '203.0.113.7');
  assert.equal(clientIpKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientIpKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientIpKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), clientIpKey('2001:db8:1:2::9'));
  assert.notEqual(clientIpKey('2001:db8:1:3::1'), clientIpKey('2001:db8:1:2::1'));
  assert.equal(clientIpKey('not an ip'), 'not an ip');
});
