/**
 * One readable line for an error, for the log (the pino `err` serializer in logger.ts) and for the few messages
 * that quote a cause (the start-up chain checks). viem's `message` repeats the request body, the URL (API keys
 * included) and, for contract calls, enumerable fields carry the whole ABI: a failing RPC wrote lines of 17 KB.
 * This keeps what says what went wrong: each error's `shortMessage` (viem, PatronError) or first message line down
 * the `cause` chain ("HTTP request failed" → "fetch failed" → "connect ECONNREFUSED 127.0.0.1:8545"), the
 * contract function and address of a failed call, and the URL reduced to its origin.
 */
export const ERROR_SUMMARY_MAX_LENGTH = 500;

/** Deeper chains exist only by mistake (a cycle is also stopped by `seen`). */
const MAX_DEPTH = 8;

/**
 * A URL reduced to scheme, host and port: RPC providers put the API key in the path (`/v2/<key>`) or the query,
 * webhooks carry tokens in theirs, and `user:password@` is dropped by construction.
 */
export function redactSecretUrl(url: string): string {
  try {
    const u = new URL(url);
    const rest = (u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '' ? '/…' : '';
    return `${u.protocol}//${u.host}${rest}`;
  } catch {
    return '[url]';
  }
}

/** Any `scheme://…` in free text (a message, a cause's details), cut at whitespace, quotes and brackets. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()[\]{}]+/gi;

/** `errorSummary(err)`: at most `maxLength` characters on one line, URLs reduced to their origin. */
export function errorSummary(err: unknown, maxLength = ERROR_SUMMARY_MAX_LENGTH): string {
  const parts: { text: string; url?: string }[] = [];
  let context: string | undefined;
  let last: Record<string, unknown> | undefined;
  const seen = new Set<unknown>();
  let current: unknown = err;
  for (let depth = 0; depth < MAX_DEPTH && isObject(current) && !seen.has(current); depth++) {
    seen.add(current);
    last = current;
    // A failed contract call names what it called (the ABI it also carries is never read).
    context ??= callContext(current);
    const text = ownText(current);
    const url = typeof current.url === 'string' ? redactSecretUrl(current.url) : undefined;
    const same = parts.find((p) => p.text === text);
    if (same !== undefined) {
      if (same.url === undefined && url !== undefined) same.url = url;
    } else if (text !== '') parts.push(url === undefined ? { text } : { text, url });
    current = current.cause;
  }
  if (last === undefined) return cap(oneLine(String(err)).replace(URL_IN_TEXT, redactSecretUrl), maxLength);
  // viem's leaf errors without a cause keep the reason in `details` (a timeout, the node's RPC error).
  const details = typeof last.details === 'string' ? trimDot(firstLine(last.details)) : '';
  if (details !== '' && !parts.some((p) => p.text === details)) parts.push({ text: details });
  const chain = parts.map((p) => (p.url === undefined ? p.text : `${p.text} (URL ${p.url})`)).join(': ');
  const line = context === undefined ? chain : `${context}: ${chain}`;
  return cap(oneLine(line || String(last.name ?? 'Error')).replace(URL_IN_TEXT, redactSecretUrl), maxLength);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** This error's own words: its short message, else its first message line, else its code (Node's AggregateError). */
function ownText(e: Record<string, unknown>): string {
  const short = typeof e.shortMessage === 'string' ? trimDot(oneLine(e.shortMessage)) : '';
  if (short !== '') return short;
  const message = typeof e.message === 'string' ? trimDot(firstLine(e.message)) : '';
  if (message !== '') return message;
  // `connect` to a name with several addresses fails with an AggregateError whose message is empty.
  const inner = Array.isArray(e.errors) ? e.errors.filter(isObject).map(ownText).filter(Boolean) : [];
  const code = typeof e.code === 'string' ? e.code : '';
  if (inner.length > 0) return code === '' ? inner.join('; ') : `${code} (${inner.join('; ')})`;
  return code;
}

function callContext(e: Record<string, unknown>): string | undefined {
  const fn = e.functionName;
  const address = e.contractAddress;
  if (typeof fn !== 'string' || fn === '') return undefined;
  return typeof address === 'string' ? `${fn}() at ${address}` : `${fn}()`;
}

function firstLine(text: string): string {
  return (text.split('\n', 1)[0] ?? '').trim();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function trimDot(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

function cap(text: string, maxLength: number): string {
  return text.length <= maxLength ? text : `${text.slice(0, Math.max(0, maxLength - 1))}…`;
}
