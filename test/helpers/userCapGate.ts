import { randomBytes } from 'node:crypto';
import { type Address, getAddress, type Hex } from 'viem';
import { PolicyDeniedError } from '../../src/errors/PatronError.js';
import { createPolicyGate, type PolicyGate } from '../../src/policies/policyGate.js';
import { createPolicyService, type PolicyService } from '../../src/policies/policyService.js';
import type { Store } from '../../src/store/store.js';

/**
 * One Patron instance's policy path over its own store handle, for the user-cap concurrency tests
 * (test/policies.userCaps.test.ts and its second process, test/helpers/userCapWorker.ts): the policy service and
 * the gate as src/deps.ts wires them, a fixed native price (3,000 USD), and requests signed as the sponsored path
 * does: the rules, then the reservation of the op's worst case.
 */
export const USER_CAP_PRICE_MICRO_USD = 3_000_000_000n;
const PAYMASTER: Address = '0x00000000000000000000000000000000000000aa';

export interface UserCapInstance {
  readonly service: PolicyService;
  readonly gate: PolicyGate;
}

export function userCapInstance(store: Store): UserCapInstance {
  const now = () => Date.now();
  // Caching off: every check reads the policies (two instances, one database).
  const service = createPolicyService({ store, cache: { ttlMs: 0, maxEntries: 10 }, now });
  const gate = createPolicyGate({
    policiesOf: (dappId, options) => service.policiesOf(dappId, options),
    ledger: store.spendLedger,
    nativeUsdMicros: () => USER_CAP_PRICE_MICRO_USD,
    now,
  });
  return { service, gate };
}

export const randomSender = (): Address => getAddress(`0x${randomBytes(20).toString('hex')}`);

/** One sponsored request's policy path: the rules, then the reservation. 'ok', or the denial's rule and scope. */
export async function signThrough(args: {
  readonly gate: PolicyGate;
  readonly dappId: string;
  readonly sender: Address;
  readonly user: string | undefined;
  readonly worstCaseWei: bigint;
}): Promise<string> {
  try {
    const pass = await args.gate.check({
      dappId: args.dappId,
      chainId: 31337,
      sender: args.sender,
      initCode: '0x',
      callData: '0x',
      maxFeePerGas: 1n,
      requestedPolicyId: undefined,
      user: args.user,
    });
    const hash = `0x${randomBytes(32).toString('hex')}` as Hex;
    const validUntil = Math.floor(Date.now() / 1000) + 600;
    await args.gate.reserve({
      pass,
      worstCaseWei: args.worstCaseWei,
      signed: { userOpHash: () => hash, opKey: () => hash, signature: hash.slice(2, 34) },
      validUntil,
      window: { unit: 'seconds', until: validUntil },
      paymaster: PAYMASTER,
    });
    return 'ok';
  } catch (err) {
    if (!(err instanceof PolicyDeniedError)) throw err;
    return `${err.rule}${err.data?.scope === undefined ? '' : `:${String(err.data.scope)}`}`;
  }
}
