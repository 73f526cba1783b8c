/**
 * Bounds on `webhookData`, the one part of a paymaster request Patron forwards as it came (to each of the
 * dApp's webhooks, as JSON). Without them a 5,000-level object (a 10 KiB body) overflowed the stack in
 * JSON.stringify: the caller got -32603, which viem retries, and every try logged a stack. A huge one would
 * be sent to every webhook of the dApp. Checked where `webhookData` enters: the paymaster methods' mode object
 * and ERC-7677 context, and the dashboard's "send test".
 */
export const MAX_WEBHOOK_DATA_DEPTH = 32;
export const MAX_WEBHOOK_DATA_BYTES = 16 * 1024;

/** A string JSON.stringify writes as it is between its quotes: printable ASCII without `"` or `\\`. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify(s)'s UTF-8 length. */
const stringBytes = (s: string): number => (PLAIN_ASCII.test(s) ? s.length + 2 : Buffer.byteLength(JSON.stringify(s)));

/**
 * What is wrong with `webhookData` ("must nest at most 32 levels", "must be at most 16384 bytes as JSON"),
 * or undefined when it is within bounds. The walk is iterative and stops at the first level too deep: a
 * recursive one would overflow on the very input it refuses. It also adds up the UTF-8 length JSON.stringify would
 * give, without building that text (a ~700-character sponsorship token in it cost every request ~4 µs and the
 * text's garbage): exact for what JSON.parse makes (plain objects, arrays, strings, finite numbers, booleans, null);
 * anything else (a prototype, toJSON, undefined) is measured by JSON.stringify itself.
 */
export function webhookDataProblem(value: Readonly<Record<string, unknown>>): string | undefined {
  const pending: [object, number][] = [[value, 1]];
  let bytes = 0;
  let plain = true;
  const add = (child: unknown, depth: number) => {
    if (typeof child === 'string') bytes += stringBytes(child);
    else if (typeof child === 'number') bytes += Number.isFinite(child) ? String(child).length : 4;
    else if (typeof child === 'boolean') bytes += child ? 4 : 5;
    else if (child === null) bytes += 4;
    else if (typeof child === 'object') pending.push([child, depth + 1]);
    else plain = false;
  };
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > MAX_WEBHOOK_DATA_DEPTH) return `must nest at most ${MAX_WEBHOOK_DATA_DEPTH} levels`;
    if (Array.isArray(node)) {
      // Brackets and the commas between elements.
      bytes += node.length === 0 ? 2 : node.length + 1;
      for (const child of node as unknown[]) add(child, depth);
      continue;
    }
    if (Object.getPrototypeOf(node) !== Object.prototype) plain = false;
    const entries = Object.entries(node);
    // Braces and the commas between members; each member's quoted key and colon.
    bytes += entries.length === 0 ? 2 : entries.length + 1;
    for (const [key, child] of entries) {
      bytes += stringBytes(key) + 1;
      add(child, depth);
    }
  }
  if (!plain) bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_WEBHOOK_DATA_BYTES) return `must be at most ${MAX_WEBHOOK_DATA_BYTES} bytes as JSON (it is ${bytes})`;
  return undefined;
}
