import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../src/deps.js';
import type { Tenant } from './testContext.js';

/** The password tests give their tenants (12+ characters, per the policy). */
export const TEST_PASSWORD = 'correct horse battery staple';
/** The Host header of inject() requests: a loopback host, so the cookie is the local, non-Secure one. */
export const LOCAL_ORIGIN = 'http://localhost:80';

export interface SignedIn {
  /** The `cookie` request header carrying the session. */
  readonly cookie: string;
  readonly csrfToken: string;
  readonly setCookie: string;
}

export async function setTenantPassword(deps: Deps, tenant: Pick<Tenant, 'accountId'>, password = TEST_PASSWORD) {
  await deps.sessions.setPassword({ memberId: tenant.accountId, password });
}

/** Signs in through the API, as the dashboard page does; fails the test unless it succeeds. */
export async function signIn(app: FastifyInstance, email: string, password = TEST_PASSWORD): Promise<SignedIn> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/admin/session',
    headers: { origin: LOCAL_ORIGIN },
    payload: { email, password },
  });
  assert.equal(res.statusCode, 200, res.body);
  const setCookie = String(res.headers['set-cookie']);
  const pair = setCookie.split(';')[0] ?? '';
  return { cookie: pair, csrfToken: res.json().data.csrfToken, setCookie };
}

/** Headers of a same-origin write from the dashboard page. */
export function writeHeaders(s: SignedIn): Record<string, string> {
  return { cookie: s.cookie, 'x-csrf-token': s.csrfToken, origin: LOCAL_ORIGIN, 'sec-fetch-site': 'same-origin' };
}
