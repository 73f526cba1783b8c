import { z } from 'zod';

/**
 * The paging fields the admin lists share (request log, audit log, lifecycle events, keeper top-ups): one message for each, so a
 * client reads the same refusal from every list.
 */
const LIMIT_ERROR = 'limit must be an integer from 1 to 200';

/** `limit`: 1 to 200 rows a page, 50 by default. */
export const pageLimit = z.coerce
  .number({ error: LIMIT_ERROR })
  .int({ error: LIMIT_ERROR })
  .min(1, { error: LIMIT_ERROR })
  .max(200, { error: LIMIT_ERROR })
  .default(50);

/** `before`: a list's `nextCursor`, of the shape `pattern` gives (the time, and the id where times tie). */
export const pageCursor = (pattern: RegExp) =>
  z.string().regex(pattern, { error: 'before must be a cursor from nextCursor' }).optional();

/** The cursor of the lists ordered by time and id: `<ms>_<uuid>`. */
export const TIME_ID_CURSOR = /^\d{1,15}_[0-9a-f-]{36}$/;
