import type { z } from 'zod';
import { ValidationError } from './PatronError.js';

/** Parses untrusted input; a failure becomes a ValidationError carrying the first issue's message. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new ValidationError(r.error.issues[0]?.message ?? 'invalid input');
  return r.data;
}
