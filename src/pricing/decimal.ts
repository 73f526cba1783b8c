/**
 * Exact decimal text <-> fixed-point bigint conversions. Prices never pass through floating-point arithmetic:
 * a JSON number is converted from its decimal text (what `String(n)` prints, the shortest text that reads
 * back as the same double), so 0.9998 becomes exactly 999_800_000_000_000_000 at 18 decimals.
 */

// Plain (`12.5`, `.5`, `5.`) and exponent (`1e-7`, `2.5E+3`) forms; no sign: prices and premiums are >= 0.
const DECIMAL_TEXT = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/;

/**
 * `text` scaled by 10^scale, truncated toward zero past `scale` fractional digits; undefined when it is not
 * a non-negative decimal. Exponents are bounded (4 digits) so a hostile `1e999999999` cannot allocate.
 */
export function decimalToFixed(text: string, scale: number): bigint | undefined {
  const m = DECIMAL_TEXT.exec(text.trim());
  if (m === null) return undefined;
  const intPart = m[1] ?? '';
  const fracPart = m[2] ?? '';
  if (intPart === '' && fracPart === '') return undefined;
  const digits = `${intPart}${fracPart}`;
  // value = digits * 10^(exponent - fracPart.length); scaled by 10^scale.
  const shift = Number(m[3] ?? '0') - fracPart.length + scale;
  const mantissa = BigInt(digits === '' ? '0' : digits);
  if (shift >= 0) return mantissa * 10n ** BigInt(shift);
  return mantissa / 10n ** BigInt(-shift);
}

/** The canonical text of `value / 10^scale`: no exponent, no trailing fractional zeros ("10", "0.5"). */
export function fixedToDecimal(value: bigint, scale: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(scale);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(scale, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** A JSON number's value at 18 decimals, from its shortest decimal text (see the file comment). */
export function numberToE18(n: number): bigint | undefined {
  if (!Number.isFinite(n) || n < 0) return undefined;
  return decimalToFixed(String(n), 18);
}
