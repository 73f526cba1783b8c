import assert from 'node:assert/strict';
import { test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { clientIpKey } from './clientIpKey.js';

test('IPv4 as is, IPv4-mapped as its IPv4, IPv6 as its /64', () => {
  assert.equal(clientIpKey('203.0.113.7'), '203.0.113.7');
  assert.equal(clientIpKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientIpKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientIpKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), clientIpKey('2001:db8:1:2::9'));
  assert.notEqual(clientIpKey('2001:db8:1:3::1'), clientIpKey('2001:db8:1:2::1'));
  assert.equal(clientIpKey('not an ip'), 'not an ip');
});

test('the dotted-IPv4 fast path gives what the parse gives, and leaves every other form to it', () => {
  // The parse's own answer, the way the function gave it before the fast path.
  const parsed = (ip: string) => {
    const p = ipaddr.parse(ip);
    return p.kind() === 'ipv4' ? p.toString() : (p as ipaddr.IPv6).toIPv4Address().toString();
  };
  let seed = 7;
  const octet = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % 256;
  };
  for (let i = 0; i < 2000; i++) {
    const ip = [octet(), octet(), octet(), octet()].join('.');
    assert.equal(clientIpKey(ip), parsed(ip), ip);
    assert.equal(clientIpKey(`::ffff:${ip}`), parsed(`::ffff:${ip}`), `::ffff:${ip}`);
  }
  for (const edge of ['0.0.0.0', '255.255.255.255', '10.0.0.255', '::ffff:0.0.0.0', '::ffff:255.255.255.255']) {
    assert.equal(clientIpKey(edge), parsed(edge), edge);
  }
  // Not canonical dotted forms: the parse decides, as before.
  for (const other of ['010.0.0.1', '256.1.1.1', '1.2.3', '::ffff:7f00:1', '::FFFF:1.2.3.4', '1.2.3.4 ']) {
    const expected = ipaddr.isValid(other) ? parsed(other) : other;
    assert.equal(clientIpKey(other), expected, other);
  }
});
