/**
 * The few admin REST calls the cluster benchmark makes (docs/reference/rest-api.md), with an auth token, through
 * the envelope `{statusCode, message, data}`; anything but a 2xx throws with the answer.
 */
export interface CapUsage {
  readonly scope: string;
  readonly unit: string;
  readonly limit: string;
  readonly used: string;
  readonly reserved: string;
}

export interface AdminClient {
  createDapp(name: string, chainIds: readonly number[]): Promise<{ dappId: string; apiKey: string }>;
  createPolicy(dappId: string, name: string, rules: unknown): Promise<{ policyId: string }>;
  usage(dappId: string, policyId: string, sender?: string): Promise<readonly CapUsage[]>;
}

export function adminClient(args: { baseUrl: string; authToken: string }): AdminClient {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${args.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${args.authToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  };
  return {
    createDapp: (name, chainIds) => call('POST', '/api/admin/dapps', { name, chainIds }),
    createPolicy: (dappId, name, rules) => call('POST', `/api/admin/dapps/${dappId}/policies`, { name, rules }),
    usage: async (dappId, policyId, sender) =>
      (
        await call<{ caps: CapUsage[] }>(
          'GET',
          `/api/admin/dapps/${dappId}/policies/${policyId}/usage${sender === undefined ? '' : `?sender=${sender}`}`,
        )
      ).caps,
  };
}
