/** The larger of two bigints (Math.max takes numbers only). */
export const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** The smaller of two bigints (Math.min takes numbers only). */
export const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
