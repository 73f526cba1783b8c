/**
 * What one paymaster request may spend beyond itself, asked for where the work is about to happen: a
 * simulation on chain, calls to the dApp's webhooks. The transport implements it with the rate limits (README,
 * "Rate limits"); each method throws RateLimitedError when the budget is spent, before the work starts.
 */
export interface SpendGuard {
  simulation(): Promise<void>;
  webhookCalls(count: number): Promise<void>;
}
