import { z } from 'zod';

/**
 * Fork mode of the embedded dev chain (docs/guides/fork-mode.md): the dev chain starts as a fork of a JSON-RPC
 * endpoint at a block, so every contract of that chain is there and Patron's own are installed beside them.
 */
export interface DevChainForkSettings {
  /** The endpoint forked (http or https). It may carry an API key, so it is never logged whole. */
  readonly url: string;
  /** The block forked; undefined: the endpoint's latest at start (logged, so a restart can pin it). */
  readonly blockNumber: bigint | undefined;
  /** HTTP headers sent with every request to the endpoint (an API key some providers take as a header). */
  readonly httpHeaders: Readonly<Record<string, string>>;
}

const forkUrl = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || (/^https?:\/\/[^/\s]/.test(v) && URL.canParse(v)), {
    error: 'PATRON_DEV_CHAIN_FORK_URL must be an http:// or https:// URL of a JSON-RPC endpoint',
  });

const forkBlock = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || /^\d{1,15}$/.test(v), {
    error: 'PATRON_DEV_CHAIN_FORK_BLOCK must be a block number (a decimal integer)',
  });

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const forkHeaders = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const problem =
      'PATRON_DEV_CHAIN_FORK_HEADERS must be a JSON object of header names to string values, e.g. {"x-api-key":"…"}';
    let json: unknown;
    try {
      json = JSON.parse(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    const parsed = z.record(z.string().regex(headerName), z.string()).safeParse(json);
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return parsed.data;
  });

export const devChainForkEnv = {
  PATRON_DEV_CHAIN_FORK_URL: forkUrl,
  PATRON_DEV_CHAIN_FORK_BLOCK: forkBlock,
  PATRON_DEV_CHAIN_FORK_HEADERS: forkHeaders,
};

type DevChainForkEnv = z.infer<z.ZodObject<typeof devChainForkEnv>>;

/** The fork settings (undefined: no fork), or the problems to report with every other one. */
export function devChainForkSettingsFrom(e: DevChainForkEnv & { readonly devChain: boolean }): {
  readonly settings: DevChainForkSettings | undefined;
  readonly problems: string[];
} {
  const url = e.PATRON_DEV_CHAIN_FORK_URL === '' ? undefined : e.PATRON_DEV_CHAIN_FORK_URL;
  const block = e.PATRON_DEV_CHAIN_FORK_BLOCK === '' ? undefined : e.PATRON_DEV_CHAIN_FORK_BLOCK;
  if (url === undefined) {
    // A block or headers with nothing to fork would be ignored silently, and the chain would not be the one meant.
    const stray = [
      ...(block === undefined ? [] : ['PATRON_DEV_CHAIN_FORK_BLOCK']),
      ...(e.PATRON_DEV_CHAIN_FORK_HEADERS === undefined ? [] : ['PATRON_DEV_CHAIN_FORK_HEADERS']),
    ];
    return { settings: undefined, problems: stray.map((s) => `${s} needs PATRON_DEV_CHAIN_FORK_URL`) };
  }
  if (!e.devChain) {
    return {
      settings: undefined,
      problems: ['PATRON_DEV_CHAIN_FORK_URL needs the embedded dev chain (PATRON_DEV_CHAIN)'],
    };
  }
  return {
    settings: Object.freeze({
      url,
      blockNumber: block === undefined ? undefined : BigInt(block),
      httpHeaders: Object.freeze({ ...(e.PATRON_DEV_CHAIN_FORK_HEADERS ?? {}) }),
    }),
    problems: [],
  };
}

/** The endpoint as it may be logged or printed: scheme, host and port, without a path or query that may hold a key. */
export function forkEndpointForDisplay(url: string): string {
  const u = new URL(url);
  const hidden = u.pathname.length > 1 || u.search !== '' || u.username !== '';
  return `${u.protocol}//${u.host}${hidden ? '/…' : ''}`;
}
