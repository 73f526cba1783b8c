/**
 * Patron's messages over node:cluster's IPC channel (the worker's start in main.ts, the metrics scrape in
 * metrics/clusterMetrics.ts) are objects tagged by a `patron` kind; the channel also carries node's and
 * libraries' own messages, which this tells apart.
 */
export const isPatronMessage = <T extends { readonly patron: string }>(
  m: unknown,
  kinds: readonly T['patron'][],
): m is T => typeof m === 'object' && m !== null && kinds.includes((m as { patron?: unknown }).patron as T['patron']);
