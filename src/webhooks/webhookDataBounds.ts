/**
 * Bounds on `webhookData`, the one part of a paymaster request Patron forwards as it came (to each of the
 * dApp's webhooks, as JSON). Without them a 5,000-level object (a 10 KiB body) overflowed the stack in
 * JSON.stringify: the caller got -32603, which viem retries, and every try logged a stack. A huge one would
 * be sent to every webhook of the dApp. Checked where `webhookData` enters: the paymaster methods' mode object
 * and ERC-7677 context, and the dashboard's "send test".
 */
export const MAX_WEBHOOK_DATA_DEPTH = 32;
export const MAX_WEBHOOK_DATA_BYTES = 16 * 1024;

/**
 * What is wrong with `webhookData` ("must nest at most 32 levels", "must be at most 16384 bytes as JSON"),
 * or undefined when it is within bounds. The depth walk is iterative and stops at the first level too deep: a
 * recursive one would overflow on the very input it refuses. The size is measured only once the depth is known
 * to be safe to serialise.
 */
export function webhookDataProblem(value: Readonly<Record<string, unknown>>): string | undefined {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > MAX_WEBHOOK_DATA_DEPTH) return `must nest at most ${MAX_WEBHOOK_DATA_DEPTH} levels`;
    for (const child of Object.values(node as object)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_WEBHOOK_DATA_BYTES) return `must be at most ${MAX_WEBHOOK_DATA_BYTES} bytes as JSON (it is ${bytes})`;
  return undefined;
}
