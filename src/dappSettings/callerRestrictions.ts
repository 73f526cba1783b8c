import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { closedObject } from '../config/closedObject.js';

/**
 * Who may call a dApp's paymaster URL (docs/guides/security-keys.md, "Caller-bound keys"): the dApp owner's
 * allowed origins, client IP ranges and method families, stored as JSON in `dapps.caller_restrictions`
 * (migration 0016) and kept compiled in the cached dApp record, so a call costs no query and an unrestricted
 * key one check. Each list left out (or `[]` for origins and cidrs) is no rule.
 */

/** The method families a key may be limited to (rpc/rpcMethod.ts `family`). */
export const METHOD_FAMILIES = ['sponsorship', 'tokenQuotes', 'dryRun'] as const;
export type MethodFamily = (typeof METHOD_FAMILIES)[number];

/** The rule a refusal names in `data.rule` (and in the request log and the metrics' `rule` label). */
export type CallerRule = 'origin' | 'ip' | 'method';

const MAX_ENTRIES = 100;

/** An origin pattern as the owner wrote it, normalised: `https://app.example.com:443`, `https://*.example.com:443`. */
function normaliseOriginPattern(text: string): { pattern: string } | { problem: string } {
  const raw = text.trim();
  if (raw === '*' || raw === '') return { problem: `"${text}" is not an origin: leave origins out to allow any` };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  const wildcard = /^[a-z]+:\/\/\*\./i.test(withScheme);
  // "*" is no valid host: parse a placeholder label in its place, so the URL parser still normalises the rest.
  const parsed = parseOrigin(wildcard ? withScheme.replace('*.', 'wildcard--.') : withScheme, { strict: true });
  if (parsed === undefined) {
    return { problem: `"${text}" is not an origin: write scheme://host[:port], e.g. https://app.example.com` };
  }
  if (!wildcard) return { pattern: parsed };
  const rest = parsed.replace('://wildcard--.', '://*.');
  const host = rest.slice(rest.indexOf('://*.') + 5, rest.lastIndexOf(':'));
  if (!host.includes('.'))
    return { problem: `"${text}": a wildcard needs a domain of two labels or more (*.example.com)` };
  return { pattern: rest };
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/**
 * `scheme://host:port` with the host lowercased, in punycode and without a trailing dot, and the port explicit, or
 * undefined for what is no http(s) origin. `strict`: a pattern, where a path, query or credentials are a mistake.
 */
export function parseOrigin(text: string, opts: { strict: boolean } = { strict: false }): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : url.port;
  if (port === undefined || url.hostname === '') return undefined;
  if (opts.strict && (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '')) {
    return undefined;
  }
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  return `${url.protocol}//${host}:${port}`;
}

/** A CIDR range (or one address) normalised; an IPv4-mapped IPv6 range becomes its IPv4 range. */
function normaliseCidr(text: string): { cidr: string } | { problem: string } {
  const raw = text.trim();
  const withPrefix = raw.includes('/') ? raw : `${raw}/${ipaddr.IPv4.isValidFourPartDecimal(raw) ? 32 : 128}`;
  let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    range = ipaddr.parseCIDR(withPrefix);
  } catch {
    return { problem: `"${text}" is not an IP range: write 203.0.113.0/24, 2001:db8::/32 or one address` };
  }
  const [addr, bits] = range;
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return { cidr: `${(addr as ipaddr.IPv6).toIPv4Address().toString()}/${bits - 96}` };
  }
  return { cidr: `${addr.toString()}/${bits}` };
}

const originsSchema = z
  .array(z.string({ error: 'each origin must be a string' }).max(300), { error: 'origins must be an array of strings' })
  .max(MAX_ENTRIES, { error: `origins may hold at most ${MAX_ENTRIES} entries` })
  .transform((list, ctx) =>
    list.flatMap((o, i) => {
      const r = normaliseOriginPattern(o);
      if ('pattern' in r) return [r.pattern];
      ctx.addIssue({ code: 'custom', message: r.problem, path: [i] });
      return [];
    }),
  );

const cidrsSchema = z
  .array(z.string({ error: 'each range must be a string' }).max(100), { error: 'cidrs must be an array of strings' })
  .max(MAX_ENTRIES, { error: `cidrs may hold at most ${MAX_ENTRIES} entries` })
  .transform((list, ctx) =>
    list.flatMap((c, i) => {
      const r = normaliseCidr(c);
      if ('cidr' in r) return [r.cidr];
      ctx.addIssue({ code: 'custom', message: r.problem, path: [i] });
      return [];
    }),
  );

const familyError = `each method family must be one of ${METHOD_FAMILIES.join(', ')}`;
const methodsSchema = z
  .array(z.enum(METHOD_FAMILIES, { error: familyError }), { error: 'methods must be an array of method families' })
  .min(1, { error: 'methods must name at least one family: leave it out to allow every method' });

/** What the owner sets (the admin API's body, the CLI's flags): the whole document, which replaces the stored one. */
export const callerRestrictionsSchema = closedObject(
  {
    origins: originsSchema.optional(),
    allowNoOrigin: z.boolean({ error: 'allowNoOrigin must be true or false' }).optional(),
    cidrs: cidrsSchema.optional(),
    methods: methodsSchema.optional(),
  },
  {
    notObject:
      'restrictions must be a JSON object such as {"origins":["https://app.example.com"],"methods":["sponsorship"]}',
  },
).refine((r) => r.allowNoOrigin === undefined || (r.origins?.length ?? 0) > 0, {
  message: 'allowNoOrigin only applies with an origins list: without one, every origin and none is allowed',
  path: ['allowNoOrigin'],
});

export type CallerRestrictionsDoc = z.output<typeof callerRestrictionsSchema>;

interface CompiledRules {
  readonly exactOrigins: ReadonlySet<string> | undefined;
  /** Per wildcard: `https://` + `:443`, and the host suffix `.example.com` (a subdomain, at any depth, not the apex). */
  readonly wildcards: readonly { readonly scheme: string; readonly suffix: string; readonly port: string }[];
  readonly allowNoOrigin: boolean;
  readonly ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][] | undefined;
  readonly methods: ReadonlySet<MethodFamily> | undefined;
}

/** The restrictions of a dApp as the cached record holds them: the document, and `rules` undefined when empty. */
export interface CallerRestrictions {
  readonly doc: CallerRestrictionsDoc;
  readonly rules: CompiledRules | undefined;
}

export const NO_CALLER_RESTRICTIONS: CallerRestrictions = Object.freeze({ doc: Object.freeze({}), rules: undefined });

export function compileCallerRestrictions(doc: CallerRestrictionsDoc): CallerRestrictions {
  const origins = doc.origins ?? [];
  const cidrs = doc.cidrs ?? [];
  if (origins.length === 0 && cidrs.length === 0 && doc.methods === undefined) return { doc, rules: undefined };
  const exact = origins.filter((o) => !o.includes('://*.'));
  const wildcards = origins
    .filter((o) => o.includes('://*.'))
    .map((o) => {
      const at = o.indexOf('://*.');
      const portAt = o.lastIndexOf(':');
      return { scheme: o.slice(0, at + 3), suffix: o.slice(at + 4, portAt), port: o.slice(portAt) };
    });
  return {
    doc,
    rules: {
      exactOrigins: origins.length === 0 ? undefined : new Set(exact),
      wildcards,
      allowNoOrigin: doc.allowNoOrigin === true,
      ranges: cidrs.length === 0 ? undefined : cidrs.map((c) => ipaddr.parseCIDR(c)),
      methods: doc.methods === undefined ? undefined : new Set(doc.methods),
    },
  };
}

/** The stored JSON column: '{}' (the default, by far the most common) parsed once. */
export function callerRestrictionsColumn(text: string): CallerRestrictions {
  if (text === '{}') return NO_CALLER_RESTRICTIONS;
  return compileCallerRestrictions(callerRestrictionsSchema.parse(JSON.parse(text)));
}

/** The first rule a call breaks, or undefined. `family` undefined: a method of no family (pm_supportedEntryPoints). */
export function brokenCallerRule(args: {
  readonly restrictions: CallerRestrictions;
  readonly origin: string | undefined;
  readonly ip: string;
  readonly family: MethodFamily | undefined;
}): CallerRule | undefined {
  const rules = args.restrictions.rules;
  if (rules === undefined) return undefined;
  if (rules.exactOrigins !== undefined && !originAllowed(rules, args.origin)) return 'origin';
  if (rules.ranges !== undefined && !ipAllowed(rules.ranges, args.ip)) return 'ip';
  if (rules.methods !== undefined && args.family !== undefined && !rules.methods.has(args.family)) return 'method';
  return undefined;
}

/**
 * Whether a browser at `origin` may call the key cross-origin (the paymaster URL's CORS answer): any origin when
 * the owner set no origin rule, else only one the rule allows.
 */
export function corsOriginAllowed(restrictions: CallerRestrictions, origin: string): boolean {
  const rules = restrictions.rules;
  return rules?.exactOrigins === undefined || originAllowed(rules, origin);
}

function originAllowed(rules: CompiledRules, origin: string | undefined): boolean {
  if (origin === undefined) return rules.allowNoOrigin;
  // "null" (sandboxed frames, file: pages, some redirects) and anything unparsable match no pattern.
  const o = parseOrigin(origin);
  if (o === undefined) return false;
  if (rules.exactOrigins?.has(o) === true) return true;
  return rules.wildcards.some((w) => {
    if (!o.startsWith(w.scheme) || !o.endsWith(w.port)) return false;
    const host = o.slice(w.scheme.length, o.length - w.port.length);
    return host.length > w.suffix.length && host.endsWith(w.suffix);
  });
}

/** Inside one of the ranges; an IPv4-mapped IPv6 client (a dual-stack socket's) counts as its IPv4 address. */
function ipAllowed(ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][], ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  return ranges.some((r) => addr.kind() === r[0].kind() && addr.match(r));
}
