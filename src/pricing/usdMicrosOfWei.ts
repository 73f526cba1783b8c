/**
 * What `wei` of the native coin is worth in micro-USD at `nativeUsdMicros` per whole coin (1e18 wei), rounded
 * up: the one conversion the policy engine reserves with (src/policies/policyRules.ts) and settlement settles
 * with (src/settlement/), so a settled amount and its reservation are in the same terms and a fraction of a micro-dollar never escapes a cap.
 */
export function usdMicrosOfWei(wei: bigint, nativeUsdMicros: bigint): bigint {
  if (wei < 0n || nativeUsdMicros < 0n) throw new RangeError('usdMicrosOfWei: negative amount or price');
  const scale = 10n ** 18n;
  return (wei * nativeUsdMicros + scale - 1n) / scale;
}
