/**
 * What one paymaster request may spend beyond itself, asked for where the work is about to happen: a
 * simulation on chain, calls to the dApp's webhooks. The transport implements it with the rate limits (docs/guides/rate-limits.md,
 * "Rate limits"); each method throws RateLimitedError when the budget is spent, before the work starts.
 */
export interface SpendGuard {
  /** `count` simulations (default 1): an estimate on EntryPoint v0.7+ runs several side by side. */
  simulation(count?: number): Promise<void>;
  webhookCalls(count: number): Promise<void>;
}
