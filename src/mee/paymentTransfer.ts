import { type Address, decodeFunctionData, encodeFunctionData, erc20Abi, type Hex, isAddressEqual } from 'viem';
import { decodeAccountCalls } from '../policies/accountCalls.js';
import type { MeeVersion } from './meeVersions.js';
import { MEE_VERSIONS } from './meeVersions.js';

/**
 * The payment op's call data, decoded with the tank's own Nexus line (policies/accountCalls.ts): it must be exactly
 * one call, to the tank's token, with no value, of `transfer(to, amount)` in its canonical encoding. Anything else the
 * tank would run (a second call, an approval, a delegatecall, a transfer of another token) is refused: the one
 * signature authorises the op whole. Returns the recipient and amount, or why it is refused.
 */
export function decodePaymentTransfer(args: {
  readonly callData: Hex;
  readonly meeVersion: MeeVersion;
  readonly token: Address;
}): { readonly to: Address; readonly amount: bigint } | string {
  const decoded = decodeAccountCalls(args.callData, MEE_VERSIONS[args.meeVersion].kind);
  if (!decoded.ok) return `the payment op's call data is not one the tank's account runs as decoded: ${decoded.reason}`;
  if (decoded.calls.length !== 1) return `the payment op makes ${decoded.calls.length} calls, not one transfer`;
  const [call] = decoded.calls;
  if (call === undefined) return 'the payment op makes no call';
  if (!isAddressEqual(call.to, args.token))
    return `the payment op calls ${call.to}, not the tank's token ${args.token}`;
  if (call.value !== 0n) return 'the payment op sends native value';
  let to: Address;
  let amount: bigint;
  try {
    const f = decodeFunctionData({ abi: erc20Abi, data: call.data });
    if (f.functionName !== 'transfer') return `the payment op calls the token's ${f.functionName}, not transfer`;
    [to, amount] = f.args;
  } catch {
    return "the payment op's token call is not an ERC-20 transfer";
  }
  // Canonical only: trailing bytes or dirty words would be a second reading of the same call.
  const canonical = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  if (canonical.toLowerCase() !== call.data.toLowerCase())
    return "the payment op's transfer is not canonically encoded";
  return { to, amount };
}
