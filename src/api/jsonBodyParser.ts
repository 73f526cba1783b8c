import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { ValidationError } from '../errors/PatronError.js';

/**
 * The only body parser: JSON (application/json and any +json type). An empty body parses to `undefined`, so
 * a DELETE without a body reaches validation ("webhookId must be a string") instead of a parser error.
 * Prototype-poisoning keys are rejected; any other content type gets 415 through the error handler.
 */
export function registerJsonBodyParser(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    // Fastify tests the regexp against the whole header, parameters included.
    /^application\/([a-z0-9.-]+\+)?json\s*(;|$)/i,
    { parseAs: 'string', bodyLimit },
    (_req, body, done) => {
      const text = String(body);
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      try {
        done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch (err) {
        done(new ValidationError('Malformed JSON in request body', { cause: err }), undefined);
      }
    },
  );
}

/** The body as a plain object: absent means `{}`, anything but a JSON object is refused. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError('Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
