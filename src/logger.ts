import pino, { type Logger } from 'pino';

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
