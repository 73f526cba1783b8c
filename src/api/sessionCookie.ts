import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The dashboard's session cookie: `HttpOnly` (scripts never see it), `SameSite=Strict` (no other site's page
 * sends it), `Path=/`, and `Secure` except on a loopback host over plain HTTP (local development; browsers
 * treat http://localhost as a secure context). A secure cookie gets the `__Host-` prefix, which browsers only
 * accept with Secure, Path=/ and no Domain: no subdomain can plant or overwrite it.
 */
export const SECURE_COOKIE = '__Host-patron_session';
export const LOCAL_COOKIE = 'patron_session';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The request's host name without port, lower-case. */
export function requestHostName(req: FastifyRequest): string {
  const host = (req.headers.host ?? '').toLowerCase();
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? '');
}

export function cookieIsSecure(req: FastifyRequest, publicUrl: string | undefined): boolean {
  if (publicUrl?.startsWith('https:')) return true;
  return !LOOPBACK_HOSTS.has(requestHostName(req));
}

/** The session cookie's value, under either name, or undefined. */
export function readSessionCookie(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  let local: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === SECURE_COOKIE) return value;
    if (name === LOCAL_COOKIE) local = value;
  }
  return local;
}

export function setSessionCookie(args: {
  reply: FastifyReply;
  secure: boolean;
  value: string;
  maxAgeSeconds: number;
}): void {
  const name = args.secure ? SECURE_COOKIE : LOCAL_COOKIE;
  const attributes = [
    `Max-Age=${Math.max(0, Math.floor(args.maxAgeSeconds))}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (args.secure) attributes.push('Secure');
  args.reply.header('set-cookie', `${name}=${args.value}; ${attributes.join('; ')}`);
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  setSessionCookie({ reply, secure, value: '', maxAgeSeconds: 0 });
}
