import { isIP, type LookupFunction } from 'node:net';

/**
 * A `lookup` for net/tls.connect that answers with the addresses already checked by the SSRF rule
 * (webhookUrlPolicy.ts): no second DNS query, so a host cannot resolve to a public address for the check and to an
 * internal one for the connection (DNS rebinding).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const first = entries[0];
    if (options.all === true) callback(null, entries);
    else if (first !== undefined) callback(null, first.address, first.family);
    else callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
  };
}
