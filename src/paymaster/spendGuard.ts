/**
 * What one paymaster request may spend beyond itself, asked for where the work is about to happen: a
 * simulation on chain, calls to the dApp's webhooks. The transport implements it with the rate limits (docs/guides/rate-limits.md,
 * "Rate limits"); each method throws RateLimitedError when the budget is spent, before the work starts.
 */
export interface SpendGuard {
  /** `count` simulations (default 1): an estimate on EntryPoint v0.7+ runs several side by side. */
  simulation(count?: number): Promise<void>;
  webhookCalls(count: number): Promise<void>;
  /**
   * Who the request's held budgets are counted against (a share of each policy cap: SigningBounds'
   * holdSharePerCallerPercent): the client IP's key, `ip:<key>`; a request whose sponsorship token names a person
   * counts against that person instead (policyRequest). Absent: no caller share applies.
   */
  readonly holder?: string | undefined;
}
