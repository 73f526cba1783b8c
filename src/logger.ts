import type { FastifyBaseLogger } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Logger } from 'pino';

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
        err: pino.stdSerializers.err,
      },
    },
    args.destination,
  );
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
