// @ts-check
/**
 * The dashboard's only way to the service: the admin REST API on this origin, with the session cookie
 * (sent by the browser, HttpOnly) and the CSRF token (kept in memory, sent on every write).
 */

export class ApiError extends Error {
  /** @param {string} message @param {number} status @param {number | undefined} retryAfter */
  constructor(message, status, retryAfter) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** @type {string | null} */
let csrfToken = null;
/** @type {(message: string) => void} */
let onExpired = () => {};

/** @param {string | null} token */
export function setCsrfToken(token) {
  csrfToken = token;
}

/** @param {(message: string) => void} handler */
export function onSessionExpired(handler) {
  onExpired = handler;
}

/**
 * @param {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>} the envelope's `data`
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    cache: 'no-store',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  /** @type {{ message?: string, data?: unknown }} */
  let envelope = {};
  try {
    envelope = await res.json();
  } catch {
    envelope = { message: `${res.status} ${res.statusText}` };
  }
  if (res.status === 401 && path !== '/api/admin/session') {
    csrfToken = null;
    onExpired(envelope.message ?? 'Your session has ended');
  }
  if (!res.ok) {
    const retry = Number(res.headers.get('retry-after'));
    throw new ApiError(
      envelope.message ?? `Request failed (${res.status})`,
      res.status,
      Number.isFinite(retry) ? retry : undefined,
    );
  }
  return envelope.data;
}

/** @param {Record<string, string | number | undefined | null>} params */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
