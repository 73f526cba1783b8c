import { type Address, getAddress } from 'viem';
import { ValidationError } from '../errors/PatronError.js';
import type { ChainCommandContext } from './commands.js';

/** Option readers shared by the chain commands (paymasterCommands.ts, ownerCommands.ts) and a few storage ones. */
type WithOptions = Pick<ChainCommandContext, 'options'>;

export function option(ctx: WithOptions, name: string): string | undefined {
  const v = ctx.options[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function requireOption(ctx: WithOptions, name: string): string {
  const v = option(ctx, name);
  if (v === undefined) throw new ValidationError(`--${name} is required`);
  return v;
}

export function addressOption(ctx: WithOptions, name: string, fallback?: Address): Address {
  const v = option(ctx, name);
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new ValidationError(`--${name} is required`);
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(v)) throw new ValidationError(`--${name} must be an address`);
  return getAddress(v);
}

export function rpcUrlOption(ctx: WithOptions): string {
  const rpcUrl = requireOption(ctx, 'rpc');
  if (!/^https?:\/\//.test(rpcUrl)) throw new ValidationError('--rpc must be an http(s) JSON-RPC URL');
  return rpcUrl;
}
