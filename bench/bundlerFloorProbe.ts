import { BaseError, http, RpcRequestError } from 'viem';
import { createBundlerClient, createPaymasterClient } from 'viem/account-abstraction';
import { bundlerFees, type SdkE2eV07 } from '../test/helpers/sdkE2eV07.js';
import { counterCall, paymasterUrlFor, receiptPolling, simpleAccount } from './sdkFlow.js';

/**
 * alto's floor on the validity left at submission, seen rather than read: one v0.7 op per expiry asked, through
 * viem's ERC-7677 flow with `expiryDuration` in the paymaster context (Patron reads it there, as abstractjs sends
 * it). alto runs unsafe (no tracer on the in-process chain), whose check is validUntil ≥ now + 5 s
 * (UnsafeValidator); its safe mode asks for 30 s, which this chain cannot show.
 */
export const PROBE_EXPIRIES = [4, 5, 6, 10] as const;

function refusal(err: unknown): string {
  if (!(err instanceof BaseError)) return String(err);
  const rpc = err.walk((e) => e instanceof RpcRequestError);
  return rpc instanceof RpcRequestError ? `${rpc.code} ${rpc.details}` : err.shortMessage;
}

export async function probeBundlerFloor(x: SdkE2eV07): Promise<{ expiry: number; outcome: string }[]> {
  const account = await simpleAccount(x, '0.7', 'floor-probe');
  const outcomes: { expiry: number; outcome: string }[] = [];
  for (const expiry of PROBE_EXPIRIES) {
    const bundler = createBundlerClient({
      account,
      client: x.publicClient,
      transport: http(x.alto.url),
      paymaster: createPaymasterClient({ transport: http(paymasterUrlFor(x, '0.7')) }),
      paymasterContext: { expiryDuration: expiry },
      userOperation: bundlerFees(x),
    });
    try {
      const hash = await bundler.sendUserOperation({ calls: [counterCall] });
      const { success } = await bundler.waitForUserOperationReceipt({ hash, ...receiptPolling });
      outcomes.push({ expiry, outcome: success ? 'accepted and included' : 'accepted, reverted on chain' });
    } catch (err) {
      outcomes.push({ expiry, outcome: `refused: ${refusal(err)}` });
    }
  }
  return outcomes;
}
