import { z } from 'zod';

/** Input schemas of account, token and dApp management, shared by the REST API and the CLI. */

/** C0 controls and DEL: refused in stored text (PostgreSQL cannot store NUL; terminals misrender the rest). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export const emailSchema = z
  .string({ error: 'email must be a string' })
  .trim()
  .toLowerCase()
  .max(254, { error: 'email must be at most 254 characters' })
  .regex(/^[^\s@]+@[^\s@]+$/, { error: 'email must be an email address' })
  .refine((v) => !CONTROL_CHARACTERS.test(v), { error: 'email must be an email address' });

export const tokenNameSchema = z
  .string({ error: 'name must be a string' })
  .trim()
  .refine((v) => !CONTROL_CHARACTERS.test(v), { error: 'name must not contain control characters' })
  .min(1, { error: 'name must not be empty' })
  .max(100, { error: 'name must be at most 100 characters' });

export const dappNameSchema = tokenNameSchema;

export const chainIdSchema = z
  .number({ error: 'chainIds must be positive integers' })
  .int({ error: 'chainIds must be positive integers' })
  .positive({ error: 'chainIds must be positive integers' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'chainIds must be positive integers' });

export const chainIdsSchema = z
  .array(chainIdSchema, { error: 'chainIds must be an array of chain ids' })
  .min(1, { error: 'chainIds must name at least one chain' })
  .max(64, { error: 'chainIds may name at most 64 chains' })
  .transform((ids) => [...new Set(ids)].sort((a, b) => a - b));

export const createTokenInput = z.object({ name: tokenNameSchema.optional() });
export const createDappInput = z.object({ name: dappNameSchema, chainIds: chainIdsSchema });
export const updateDappInput = z.object({ name: dappNameSchema.optional(), chainIds: chainIdsSchema.optional() });

/** A dashboard password being set: long enough to resist guessing, bounded so hashing cost is too. */
export const newPasswordSchema = z
  .string({ error: 'password must be a string' })
  .min(12, { error: 'password must be at least 12 characters' })
  .max(256, { error: 'password must be at most 256 characters' });

export const signInInput = z.object({
  email: emailSchema,
  password: z
    .string({ error: 'password must be a string' })
    .min(1, { error: 'password must not be empty' })
    .max(256, { error: 'password must be at most 256 characters' }),
});

export const memberRoleSchema = z.enum(['owner', 'operator', 'viewer'], {
  error: 'role must be one of owner, operator, viewer',
});
export const addMemberInput = z.object({ email: emailSchema, role: memberRoleSchema });
export const setMemberRoleInput = z.object({ role: memberRoleSchema });
