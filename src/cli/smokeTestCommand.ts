import { getAddress, type Hex } from 'viem';
import { ValidationError } from '../errors/PatronError.js';
import type { CliIo } from './cliOutput.js';
import { runSmokeTest } from './smokeTest.js';
import { parseWebhookData } from './smokeTestChecks.js';

type Options = Readonly<Record<string, string | string[] | boolean | undefined>>;

/** How long the --bundler path waits for the op's receipt: a few blocks on any chain, and a slow bundler's batch. */
const RECEIPT_TIMEOUT_MS = 120_000;

/**
 * `patron demo --api-key KEY --url URL --chain ID --rpc NODE [--bundler URL]`: the smoke test of a deployed Patron
 * (smokeTest.ts). It reads no configuration and opens no storage: an operator runs it from any machine with the
 * dApp's API key. The owner key, a secret, comes from PATRON_DEMO_OWNER_KEY, never argv (it would show in `ps`).
 */
export async function runSmokeTestCommand(args: {
  options: Options;
  env: Readonly<Record<string, string | undefined>>;
  io: CliIo;
  json: boolean;
}): Promise<void> {
  const { options, io, json } = args;
  const text = (name: string, required: boolean): string | undefined => {
    const v = options[name];
    const s = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof s === 'string' && s !== '') return s;
    if (required)
      throw new ValidationError(`--${name} is required with --api-key (the smoke test of a deployed Patron)`);
    return undefined;
  };
  const url = (name: string, required: boolean): string | undefined => {
    const v = text(name, required);
    if (v !== undefined && !/^https?:\/\/[^\s]+$/.test(v))
      throw new ValidationError(`--${name} must be an http(s) URL`);
    return v?.replace(/\/$/, '');
  };
  const chain = text('chain', true) ?? '';
  if (!/^\d{1,15}$/.test(chain)) throw new ValidationError(`--chain takes one chain id, got "${chain}"`);
  const factory = text('factory', false);
  if (factory !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(factory)) {
    throw new ValidationError('--factory must be an address');
  }
  const ownerKey = args.env.PATRON_DEMO_OWNER_KEY;
  if (ownerKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(ownerKey)) {
    throw new ValidationError('PATRON_DEMO_OWNER_KEY must be a 32-byte hex private key (0x + 64 hex digits)');
  }
  const bundlerUrl = url('bundler', false);
  const entryPointVersion = text('entry-point-version', false);
  const webhookData = parseWebhookData(text('webhook-data', false));
  const lines: string[] = [];
  const print = (line: string) => (json ? lines.push(line) : io.stdout(`${line}\n`));
  await runSmokeTest({
    baseUrl: url('url', true) ?? '',
    apiKey: text('api-key', true) ?? '',
    chainId: Number(chain),
    rpcUrl: url('rpc', true) ?? '',
    ...(bundlerUrl === undefined ? {} : { bundlerUrl }),
    ...(entryPointVersion === undefined ? {} : { entryPointVersion }),
    ...(factory === undefined ? {} : { factory: getAddress(factory) }),
    ...(ownerKey === undefined ? {} : { ownerKey: ownerKey as Hex }),
    ...(webhookData === undefined ? {} : { webhookData }),
    receiptTimeoutMs: RECEIPT_TIMEOUT_MS,
    print,
  });
  if (json)
    io.stdout(`${JSON.stringify({ smokeTest: { passed: true, sent: bundlerUrl !== undefined, steps: lines } })}\n`);
}
