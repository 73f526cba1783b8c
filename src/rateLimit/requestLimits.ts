import {
  applyRateLimitsOverride,
  type DappRateLimits,
  type DappRateLimitsOverride,
  type RateLimitSettings,
} from '../config/rateLimitSettings.js';
import type { SpendGuard } from '../paymaster/spendGuard.js';
import { clientIpKey } from './clientIpKey.js';
import type { RateLimiter } from './rateLimiter.js';

/** A dApp's traffic from one client IP: each paymaster call, and what the domain asks for (SpendGuard). */
export interface DappSpend extends SpendGuard {
  call(): Promise<void>;
}

/**
 * The rate limits by what they count (docs/guides/rate-limits.md, "Rate limits"). The transport asks before the work: the
 * paymaster route per request and per further call of a batch, the REST routes per request, sign-in per attempt,
 * the admin API per authenticated request. IPs are counted by clientIpKey (an IPv6 client by its /64).
 */
export interface RequestLimits {
  /**
   * One unit of this IP's paymaster budget (`calls.perIp`): every HTTP request on the paymaster URLs, before its
   * body is read or its API key looked up (preflights, unparsable bodies and unknown keys spend it too), and each
   * call of a batch after its first (the request's unit pays for that one).
   */
  paymasterCall(ip: string): Promise<void>;
  /** The budgets of one dApp's traffic from one IP, with the dApp's overrides. */
  dappSpend(args: { dappId: string; override: DappRateLimitsOverride | undefined; ip: string }): DappSpend;
  signIn(ip: string, email: string): Promise<void>;
  http(ip: string): Promise<void>;
  devChain(ip: string): Promise<void>;
  admin(accountId: string): Promise<void>;
}

export function createRequestLimits(args: { limiter: RateLimiter; settings: RateLimitSettings }): RequestLimits {
  const { limiter, settings } = args;
  // A dApp's resolved budgets, memoised per override object (the cached dApp record keeps the same one).
  const resolved = new WeakMap<object, DappRateLimits>();
  const budgetsOf = (override: DappRateLimitsOverride | undefined): DappRateLimits => {
    if (override === undefined) return settings;
    let r = resolved.get(override);
    if (r === undefined) {
      r = applyRateLimitsOverride<DappRateLimits>(settings, override);
      resolved.set(override, r);
    }
    return r;
  };
  return {
    paymasterCall: (ip) =>
      limiter.take({
        limit: 'calls.perIp',
        what: 'paymaster calls from this IP',
        key: clientIpKey(ip),
        budget: settings.calls.perIp,
      }),
    dappSpend({ dappId, override, ip }) {
      const b = budgetsOf(override);
      const ipKey = `${dappId}|${clientIpKey(ip)}`;
      return {
        holder: `ip:${clientIpKey(ip, 48)}`,
        call: () =>
          limiter.take({
            limit: 'calls.perKey',
            what: 'paymaster calls for this API key',
            key: dappId,
            budget: b.calls.perKey,
          }),
        async simulation(count = 1) {
          await limiter.take({
            limit: 'simulations.perIp',
            what: 'simulations from this IP',
            key: ipKey,
            budget: b.simulations.perIp,
            cost: count,
          });
          await limiter.take({
            limit: 'simulations.perKey',
            what: 'simulations for this API key',
            key: dappId,
            budget: b.simulations.perKey,
            cost: count,
          });
        },
        async webhookCalls(count) {
          await limiter.take({
            limit: 'webhookCalls.perIp',
            what: 'webhook calls from this IP',
            key: ipKey,
            budget: b.webhookCalls.perIp,
            cost: count,
          });
          await limiter.take({
            limit: 'webhookCalls.perKey',
            what: 'webhook calls for this API key',
            key: dappId,
            budget: b.webhookCalls.perKey,
            cost: count,
          });
        },
      };
    },
    async signIn(ip, email) {
      await limiter.take({
        limit: 'signIn.perIp',
        what: 'sign-in attempts from this IP',
        key: clientIpKey(ip),
        budget: settings.signIn.perIp,
      });
      await limiter.take({
        limit: 'signIn.perEmail',
        what: 'sign-in attempts for this email',
        key: email,
        budget: settings.signIn.perEmail,
      });
    },
    http: (ip) =>
      limiter.take({
        limit: 'http.perIp',
        what: 'requests from this IP',
        key: clientIpKey(ip),
        budget: settings.http.perIp,
      }),
    devChain: (ip) =>
      limiter.take({
        limit: 'devChain.perIp',
        what: 'dev chain requests from this IP',
        key: clientIpKey(ip),
        budget: settings.devChain.perIp,
      }),
    admin: (accountId) =>
      limiter.take({
        limit: 'admin.perAccount',
        what: 'admin requests for this account',
        key: accountId,
        budget: settings.admin.perAccount,
      }),
  };
}
