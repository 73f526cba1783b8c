import type { Hex } from 'viem';

/** The revert data inside a JSON-RPC error, wherever the node put it (`data`, `data.data`, a cause's). */
export function findRevertData(err: unknown): Hex | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const data = (current as { data?: unknown }).data;
    if (typeof data === 'string' && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data as Hex;
    if (typeof data === 'object' && data !== null) {
      const inner = (data as { data?: unknown }).data;
      if (typeof inner === 'string' && /^0x[0-9a-fA-F]*$/.test(inner) && inner.length >= 10) return inner as Hex;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
