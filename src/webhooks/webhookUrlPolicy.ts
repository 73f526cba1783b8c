import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../errors/PatronError.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Resolves a host name to its IP addresses (all families). Injected so tests need no DNS. */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Only globally routable unicast addresses pass. ipaddr.js classifies loopback, RFC 1918 private, link-local
 * (which holds the 169.254.169.254 cloud metadata address), unique-local (fd00:ec2::254), carrier-grade NAT
 * (100.100.100.200, another metadata address), multicast, reserved, and the IPv6 forms that embed an IPv4
 * address (mapped, NAT64, 6to4, Teredo) as ranges other than 'unicast'; an IPv4-mapped address is judged as
 * the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
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
      // Stored as sent, so nothing the URL parser would silently strip or escape may be in it.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
      const url = URL.canParse(raw) && !/[\s\u0000-\u001f\u007f]/.test(raw) ? new URL(raw) : undefined;
      if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
        throw new ValidationError('webhookUrl must be an absolute http or https URL');
      }
      if (url.username !== '' || url.password !== '') {
        throw new ValidationError('webhookUrl must not contain credentials');
      }
      if (!args.allowPrivate) await assertPublicHost(url.hostname, args.resolve);
      return url.toString();
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
