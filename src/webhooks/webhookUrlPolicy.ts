import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../errors/PatronError.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Resolves a host name to its IP addresses (all families). Injected so tests need no DNS. */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Only globally routable unicast addresses pass. For IPv4, ipaddr.js's ranges decide: loopback, RFC 1918
 * private, link-local (which holds the 169.254.169.254 cloud metadata address), carrier-grade NAT
 * (100.100.100.200, another metadata address), multicast, broadcast and reserved are refused.
 *
 * For IPv6 an allow-list, not ipaddr.js's classes: ipaddr.js calls the IPv4-compatible range `::/96` unicast,
 * so `[::127.0.0.1]` and `[::a9fe:a9fe]` (169.254.169.254) passed as public. Only the global unicast space
 * 2000::/3 passes, minus the two forms inside it that carry an IPv4 address (6to4 2002::/16, Teredo 2001::/32).
 * Everything else is refused outright: IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64
 * `64:ff9b::/96` and `64:ff9b:1::/48`, unique-local, link-local, multicast. The one exception is an
 * IPv4-mapped address (`::ffff:a.b.c.d`), which the kernel connects to as that IPv4 address: it is judged as
 * the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(hexTail(address));
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  const [first = 0, second = 0] = v6.parts;
  if ((first & 0xe000) !== 0x2000) return false; // outside 2000::/3, global unicast
  if (first === 0x2002 || (first === 0x2001 && second === 0)) return false; // 6to4, Teredo
  return v6.range() === 'unicast';
}

/**
 * An IPv6 text with a dotted IPv4 tail (`::8.8.8.8`) with the tail as two hex groups (`::808:808`): ipaddr.js
 * reads any such text as IPv4-mapped, whatever precedes the tail, which would judge an IPv4-compatible or a
 * NAT64 address as the IPv4 address it carries.
 */
function hexTail(address: string): string {
  const m = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (m === null) return address;
  const [a, b, c, d] = m.slice(2).map(Number) as [number, number, number, number];
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export interface WebhookUrlPolicy {
  /** Validates a webhook URL and returns it normalised; throws ValidationError with the reason. */
  check(url: string): Promise<string>;
}

export function createWebhookUrlPolicy(args: { allowPrivate: boolean; resolve: HostResolver }): WebhookUrlPolicy {
  return {
    async check(raw) {
      if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
        throw new ValidationError(`webhookUrl must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
      }
      // Nothing the URL parser would silently strip may be in it: the stored URL is its normalised form.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
      const url = URL.canParse(raw) && !/[\s\u0000-\u001f\u007f]/.test(raw) ? new URL(raw) : undefined;
      if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
        throw new ValidationError('webhookUrl must be an absolute http or https URL');
      }
      if (url.username !== '' || url.password !== '') {
        throw new ValidationError('webhookUrl must not contain credentials');
      }
      // Stored normalised (WHATWG serialisation): what is stored is what is called. Serialising can lengthen it
      // (non-ASCII is percent-encoded, an IDN host becomes punycode), so the stored form is held to the bound too.
      const normalised = url.toString();
      if (normalised.length > MAX_WEBHOOK_URL_LENGTH) {
        throw new ValidationError(`webhookUrl must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
      }
      if (!args.allowPrivate) await assertPublicHost(url.hostname, args.resolve);
      return normalised;
    },
  };
}

const INTERNAL_ADDRESS_MESSAGE = 'webhookUrl must not point at a loopback, private, link-local or metadata address';

/** Throws unless every address the host stands for is public. Also used at call time, against DNS rebinding. */
export async function assertPublicHost(hostname: string, resolve: HostResolver): Promise<void> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) throw new ValidationError(INTERNAL_ADDRESS_MESSAGE);
    return;
  }
  const lower = host.toLowerCase().replace(/\.$/, '');
  if (lower === 'localhost' || lower.endsWith('.localhost') || lower.endsWith('.internal')) {
    throw new ValidationError(INTERNAL_ADDRESS_MESSAGE);
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    throw new ValidationError('webhookUrl host could not be resolved', { cause: err });
  }
  if (addresses.length === 0) throw new ValidationError('webhookUrl host could not be resolved');
  if (!addresses.every(isPublicAddress)) throw new ValidationError(INTERNAL_ADDRESS_MESSAGE);
}
