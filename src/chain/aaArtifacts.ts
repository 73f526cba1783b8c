import { createRequire } from 'node:module';
import { type ContractArtifact, readContractArtifact } from './artifacts.js';

/**
 * Artifacts of `@account-abstraction/contracts` 0.7.0, 0.8.0 and 0.9.0-rc.1, installed side by side as npm
 * aliases (`@account-abstraction/contracts-v07` …). They are read from node_modules at run time and never
 * copied into this repository: the sources are GPL-3.0, and the npm build of 0.7.0 and 0.8.0 is byte-identical
 * to the canonical deployments, which is what makes the dev chain's addresses the real ones.
 */

export type AccountAbstractionArtifactVersion = '0.7' | '0.8' | '0.9';

const packageOf: Readonly<Record<AccountAbstractionArtifactVersion, { name: string; release: string }>> = {
  '0.7': { name: '@account-abstraction/contracts-v07', release: '0.7.0' },
  '0.8': { name: '@account-abstraction/contracts-v08', release: '0.8.0' },
  '0.9': { name: '@account-abstraction/contracts-v09', release: '0.9.0-rc.1' },
};

/** `name` is a file under the package's `artifacts/` (e.g. 'EntryPoint', 'EntryPointSimulations'). */
export function loadAccountAbstractionArtifact(
  version: AccountAbstractionArtifactVersion,
  name: string,
): ContractArtifact {
  // A name is a bare contract name; refusing paths keeps a caller-supplied string inside the package.
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`not a contract name: ${JSON.stringify(name)}`);
  const pkg = packageOf[version];
  const require = createRequire(import.meta.url);
  let path: string;
  try {
    path = require.resolve(`${pkg.name}/artifacts/${name}.json`);
  } catch (cause) {
    throw new Error(`no artifact ${name} in ${pkg.name} (install npm:@account-abstraction/contracts@${pkg.release})`, {
      cause,
    });
  }
  return readContractArtifact(path, `install npm:@account-abstraction/contracts@${pkg.release} as ${pkg.name}`);
}
