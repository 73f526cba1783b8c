/** `validUntil`/`validAfter` (unix seconds) for a request: its expiryDuration (or the default), capped. */
export function validityWindow(
  policy: { defaultExpirySeconds: number; maxExpirySeconds: number; validAfterSkewSeconds: number },
  nowMs: number,
  expiryDuration: number | undefined,
): { validUntil: number; validAfter: number } {
  const now = Math.floor(nowMs / 1000);
  const expiry = Math.min(expiryDuration ?? policy.defaultExpirySeconds, policy.maxExpirySeconds);
  return { validUntil: now + expiry, validAfter: Math.max(0, now - policy.validAfterSkewSeconds) };
}
