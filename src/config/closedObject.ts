import { z } from 'zod';

/**
 * A JSON settings object that refuses keys it does not know (PATRON_CHAINS entries, PATRON_RATE_LIMITS, a dApp's
 * limits). An unknown key is almost always a misspelling or a key one level off, and accepting it silently drops
 * the setting (a `paymasterV07` key left the v0.7 paymaster unconfigured without a word), so each one is named
 * with the fix: `paymasterV07 is not a known key here: did you mean paymasters.0.7 ...?`.
 *
 * The message starts with the key, so a caller that knows the object's path prefixes it (`PATRON_CHAINS[0].` +
 * message). `notObject` is the message for a value that is not an object at all.
 */
export function closedObject<Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  options: {
    readonly notObject: string;
    /** A fix for a key that belongs elsewhere (`maxOpCostWei` at the top of a dApp's limits belongs under bounds). */
    readonly misplaced?: Misplaced;
  },
) {
  return z.strictObject(shape, { error: closedErrors({ ...options, known: Object.keys(shape) }) });
}

type Misplaced = (key: string, input: Readonly<Record<string, unknown>>) => string | undefined;

/**
 * The error map of an object or a record with a closed key set (zod reports its unknown keys as one
 * `unrecognized_keys` issue of the object itself, which a plain `error` string would replace by "must be an object").
 */
export function closedErrors(options: {
  readonly known: readonly string[];
  readonly notObject: string;
  readonly misplaced?: Misplaced;
}) {
  return (issue: z.core.$ZodRawIssue): string => {
    if (issue.code !== 'unrecognized_keys') return options.notObject;
    const input = (typeof issue.input === 'object' && issue.input !== null ? issue.input : {}) as Record<
      string,
      unknown
    >;
    return unknownKeysMessage({
      keys: issue.keys,
      known: options.known,
      fix: (key) => options.misplaced?.(key, input),
    });
  };
}

/**
 * One issue as `ROOT.path: message`; an unknown key as `ROOT.path.key is not a known key here: …` (its message
 * starts with the key). `dropField` leaves a trailing field name to the message, which names it itself.
 */
export function issueText(args: { root: string; issue: z.core.$ZodIssue; dropField?: boolean }): string {
  const { issue } = args;
  const path = issue.path;
  const shownPath =
    issue.code !== 'unrecognized_keys' && args.dropField === true && typeof path[path.length - 1] === 'string'
      ? path.slice(0, -1)
      : path;
  const at = shownPath.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : `${acc}.${String(key)}`),
    args.root,
  );
  if (issue.code === 'unrecognized_keys') return at === '' ? issue.message : `${at}.${issue.message}`;
  // A message about the root itself ("PATRON_RATE_LIMITS must be a JSON object") already names it.
  if (shownPath.length === 0 && issue.message.startsWith(args.root)) return issue.message;
  return at === '' ? issue.message : `${at}: ${issue.message}`;
}

/** `a is not a known key here: did you mean b?`, for the first unknown key, the others listed after it. */
export function unknownKeysMessage(args: {
  readonly keys: readonly string[];
  readonly known: readonly string[];
  readonly fix?: (key: string) => string | undefined;
}): string {
  const [first = '', ...rest] = args.keys;
  const fix = args.fix?.(first);
  const near = closestKey(first, args.known);
  const advice =
    fix !== undefined
      ? `: ${fix}`
      : near !== undefined
        ? `: did you mean ${near}?`
        : args.known.length > 0
          ? ` (known keys: ${args.known.join(', ')})`
          : '';
  const others = rest.length === 0 ? '' : `; also unknown: ${rest.map(shown).join(', ')}`;
  return `${shown(first)} is not a known key here${advice}${others}`;
}

/** Keys are the user's text: shortened, so a pasted blob does not flood the message. */
const shown = (key: string) => (key.length > 60 ? `${key.slice(0, 57)}...` : key);

/** The known key the given one most likely meant: the same but for case or separators, or within 2 edits. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const exact = known.find((k) => fold(k) === fold(key));
  if (exact !== undefined) return exact;
  // A key cut short ("maxOpCost" for maxOpCostWei).
  const longer = fold(key).length >= 5 ? known.filter((k) => fold(k).startsWith(fold(key))) : [];
  if (longer.length === 1) return longer[0];
  let best: { key: string; distance: number } | undefined;
  for (const k of known) {
    const d = editDistance(fold(k), fold(key));
    if (d <= Math.min(2, Math.floor(k.length / 3)) && (best === undefined || d < best.distance)) {
      best = { key: k, distance: d };
    }
  }
  return best?.key;
}

/** Levenshtein distance (keys are short: a plain two-row table). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** `{"bounds":{"maxOpCostWei":"1"}}`: the key and its value moved under `parent`, as the user would write it. */
export function movedUnder(args: { parent: string; key: string; value: unknown }): string {
  const value = JSON.stringify(args.value) ?? 'null';
  const text = value.length > 60 ? '…' : value;
  return `${args.key} belongs under "${args.parent}": {"${args.parent}":{"${args.key}":${text}}}`;
}
