import ipaddr from 'ipaddr.js';

/**
 * The key a client IP is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 one as its IPv4), an
 * IPv6 address as its /64 prefix, since one subscriber usually holds a whole /64 and could otherwise rotate
 * through 2^64 addresses to reset its count.
 */
export function clientIpKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const p = v6.parts;
  return `${[p[0], p[1], p[2], p[3]].map((x) => (x ?? 0).toString(16)).join(':')}::/64`;
}
