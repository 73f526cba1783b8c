import ipaddr from 'ipaddr.js';

/** Four decimal octets 0-255 without leading zeros: the canonical dotted form. */
const DOTTED_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const MAPPED_PREFIX = '::ffff:';

/**
 * The key a client IP is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 one as its IPv4), an
 * IPv6 address as its /64 prefix, since one subscriber usually holds a whole /64 and could otherwise rotate
 * through 2^64 addresses to reset its count. A share of a dApp's caps held by a caller (SpendGuard's `holder`) counts
 * an IPv6 site by its /48 (`v6PrefixBits`), what one site is usually allocated, so its 65,536 /64s are one caller.
 */
export function clientIpKey(ip: string, v6PrefixBits: 48 | 64 = 64): string {
  // The common cases without a parse (every paymaster call asks twice): a socket's dotted IPv4, as it is or mapped
  // into IPv6 (a dual-stack listener's), are already in the form ipaddr.js would give.
  if (DOTTED_IPV4.test(ip)) return ip;
  if (ip.startsWith(MAPPED_PREFIX) && DOTTED_IPV4.test(ip.slice(MAPPED_PREFIX.length))) {
    return ip.slice(MAPPED_PREFIX.length);
  }
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const p = v6.parts;
  const words = v6PrefixBits === 48 ? [p[0], p[1], p[2]] : [p[0], p[1], p[2], p[3]];
  return `${words.map((x) => (x ?? 0).toString(16)).join(':')}::/${v6PrefixBits}`;
}
