import { pemToJwk } from '../crypto/pemPublicKey.js';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';

/** A pasted PEM that does not import as its algorithm's public key, named for the admin API's answer. */
export async function pemProblems(settings: DappTokenSettings): Promise<string[]> {
  const problems: string[] = [];
  for (const k of settings.keys) {
    if (k.kind !== 'pem') continue;
    await pemToJwk({ pem: k.pem, alg: k.alg }).catch(() => {
      problems.push(`keys: ${k.id} is not a PEM (SPKI) public key for ${k.alg}`);
    });
  }
  return problems;
}
