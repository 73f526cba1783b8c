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
        req: (req: { method: string; url: string; id: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
        }),
        err: pino.stdSerializers.err,
      },
    },
    args.destination,
  );
}
