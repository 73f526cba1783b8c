import { z } from 'zod';

/** Environment values parsed with a message that names the variable: shared by every settings module. */
export const booleanFromEnv = (name: string) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''], {
      error: `${name} must be one of true, false, 1, 0, yes, no`,
    })
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : ['1', 'true', 'yes'].includes(v)));

export const integerFromEnv = (name: string, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      const n = Number(v);
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

/**
 * Production mode from the raw values: PATRON_PRODUCTION when set (its value is checked by the schema that reads
 * it), else NODE_ENV=production. Shared by loadConfig and the CLI's chain commands' settings, which decide the
 * signer's default from it.
 */
export function productionFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  const explicit = env.PATRON_PRODUCTION ?? '';
  return explicit === '' ? env.NODE_ENV === 'production' : ['1', 'true', 'yes'].includes(explicit);
}
