import type { FastifyBaseLogger } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { errorSummary } from './errors/errorSummary.js';

/** API keys travel in the path of the paymaster URL (`/api/v1/{chainId}/{apiKey}`): never log them whole. */
export function redactUrl(url: string): string {
  return url.replace(/^(\/api\/v\d+\/\d+\/)([^/?#]{0,6})[^/?#]*/, '$1$2…');
}

export function createLogger(args: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: args.level,
      redact: {
        paths: ['req.headers.authtoken', 'req.headers.apikey', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '[redacted]',
      },
      serializers: {
        // Only method, URL (with the API key cut off) and id: headers carry credentials and are never logged.
        req: (req: { method?: unknown; url?: unknown; id?: unknown }) => ({
          id: req.id,
          method: req.method,
          url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
        }),
        // One short line per error, never viem's ABI or request body, URLs cut to their origin (serializeError).
        err: serializeError,
      },
    },
    args.destination,
  );
}

/** The JavaScript errors a bug throws: for these the log keeps a few stack frames, which say where. */
const PROGRAMMING_ERRORS: ReadonlySet<string> = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError']);
const MAX_FRAMES = 6;
const MAX_STACK_LENGTH = 600;

/**
 * The `err` of a log line: its type, `errorSummary` (one line of at most 500 characters: the short messages down
 * the cause chain, URLs reduced to their origin) and its code. pino's standard serializer copied every enumerable
 * field, and viem's errors carry the contract ABI, the request body and the RPC URL with its API key: one failing
 * read wrote 17 KB. Stack frames are kept only for a bug (a TypeError or the like, or a plain Error; not when a
 * system error such as ECONNREFUSED, whose message already says what happened, is down the chain), at most six,
 * without the message line.
 */
export function serializeError(err: unknown): Record<string, unknown> {
  if (typeof err !== 'object' || err === null) return { message: errorSummary(err) };
  const e = err as { name?: unknown; code?: unknown };
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? { code: e.code } : {};
  const stack = bugFrames(err);
  return {
    type: typeof e.name === 'string' ? e.name : 'Error',
    message: errorSummary(err),
    ...code,
    ...(stack === undefined ? {} : { stack }),
  };
}

function bugFrames(err: object): string | undefined {
  let bug: Error | undefined;
  const seen = new Set<unknown>();
  for (let e: unknown = err; typeof e === 'object' && e !== null && !seen.has(e); e = (e as Error).cause) {
    seen.add(e);
    // A system error down the chain (ECONNREFUSED, a database's SQLSTATE) explains itself: no frames. (A
    // PatronError's code is a category, and it may wrap a bug.)
    const { code, shortMessage } = e as { code?: unknown; shortMessage?: unknown };
    if (typeof code === 'string' && typeof shortMessage !== 'string') return undefined;
    // A plain Error is what our own code throws for a broken invariant (operational failures have classes of
    // their own: PatronError, viem's BaseError): its frames say where, as a TypeError's do.
    if (bug === undefined && e instanceof Error && (PROGRAMMING_ERRORS.has(e.name) || e.constructor === Error)) bug = e;
  }
  if (bug?.stack === undefined) return undefined;
  const frames = bug.stack
    .split('\n')
    .filter((l) => l.startsWith('    at '))
    .slice(0, MAX_FRAMES)
    .map((l) => l.trim())
    .join('\n');
  return frames === '' ? undefined : frames.slice(0, MAX_STACK_LENGTH);
}

const LEVEL_VALUES: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};
type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger whose pino child (bindings: the request id) is built on its first line, not up front.
 * Fastify makes one child per request, and pino's child() serialises the bindings and sets up the level
 * methods: a few µs, paid by every paymaster request although it logs nothing at info (see app.ts). A line
 * below the level is dropped without building it; everything else goes to the same child pino would have built.
 */
class LazyChildLogger implements FastifyBaseLogger {
  #real: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #child(): FastifyBaseLogger {
    this.#real ??= this.#parent.child(this.#bindings, this.#options);
    return this.#real;
  }

  #log(method: LevelMethod, args: unknown[]): void {
    const level = this.level;
    if (this.#real === undefined && (LEVEL_VALUES[method] ?? 0) < (LEVEL_VALUES[level] ?? 0)) return;
    const child = this.#child();
    Reflect.apply(child[method], child, args);
  }

  get level(): string {
    return this.#real?.level ?? this.#options.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#child().level = level;
  }

  fatal = (...args: unknown[]): void => this.#log('fatal', args);
  error = (...args: unknown[]): void => this.#log('error', args);
  warn = (...args: unknown[]): void => this.#log('warn', args);
  info = (...args: unknown[]): void => this.#log('info', args);
  debug = (...args: unknown[]): void => this.#log('debug', args);
  trace = (...args: unknown[]): void => this.#log('trace', args);
  silent = (): void => {};

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#child().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: request loggers built lazily (LazyChildLogger). */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}
