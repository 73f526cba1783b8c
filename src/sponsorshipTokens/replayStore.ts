/**
 * Where spent `jti`s are kept until their token expires. `spend` is exact under concurrency: of two calls with the
 * same dApp and jti, exactly one gets `true` (in SQL, an INSERT against the primary key (dapp_id, jti) of
 * `sponsorship_token_uses`, migration 0017; a row whose `expires_at` passed may be taken over by the same insert).
 */
export interface JtiReplayStore {
  /** True when this call spent the jti; false when it was spent before and has not expired. */
  spend(args: { dappId: string; jti: string; expiresAt: number; nowSeconds: number }): Promise<boolean>;
  /** Deletes the rows that expired before `nowSeconds` (a periodic sweep); returns how many. */
  sweep(nowSeconds: number): Promise<number>;
}

/** The in-process store (tests, and a single instance with no database use for it). */
export function createMemoryJtiReplayStore(): JtiReplayStore {
  const spent = new Map<string, number>();
  return {
    async spend({ dappId, jti, expiresAt, nowSeconds }) {
      const key = `${dappId}\u0000${jti}`;
      const until = spent.get(key);
      if (until !== undefined && until >= nowSeconds) return false;
      spent.set(key, expiresAt);
      return true;
    },
    async sweep(nowSeconds) {
      let n = 0;
      for (const [key, until] of spent) {
        if (until < nowSeconds) {
          spent.delete(key);
          n += 1;
        }
      }
      return n;
    },
  };
}
