import { z } from 'zod';
import { integerFromEnv } from './envValues.js';

/** Where the service listens when PORT and HOST are not set (config.ts uses the same). */
export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';

const listenEnv = z.object({
  PORT: integerFromEnv('PORT', 0, 65535),
  HOST: z.string().min(1, { error: 'HOST must not be empty' }).optional(),
});

/**
 * The address a local client reaches the running service at, read from the service's own PORT and HOST alone: what
 * `patron healthcheck` needs inside the service's container, where the full configuration (the master key, the
 * signer, the database) is no business of a probe. A wildcard HOST (0.0.0.0, ::) is reached on loopback.
 */
export function localServiceAddress(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; host: string; port: number } | { ok: false; problems: string[] } {
  const parsed = listenEnv.safeParse({ PORT: env.PORT, HOST: env.HOST });
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => i.message) };
  const host = parsed.data.HOST ?? DEFAULT_HOST;
  const loopback = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  return { ok: true, host: loopback, port: parsed.data.PORT ?? DEFAULT_PORT };
}
