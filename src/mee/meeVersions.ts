import {
  DEFAULT_CONFIGURATIONS_BY_MEE_VERSION,
  DEFAULT_MEE_VERSION,
  getMEEVersion,
  type MEEVersion,
} from '@biconomy/abstractjs';
import { ValidationError } from '../errors/PatronError.js';

/**
 * The MEE versions a gas tank may be pinned to: those of the installed abstractjs (1.2.3) whose Nexus (1.2 and 1.3,
 * chain/nexusAccounts.ts) has the MEE validator installed by default. 1.0.0 and 1.1.0 (Nexus 1.0.2) are left out:
 * their accounts need the validator installed explicitly, which a tank created by its address alone does not have.
 */
export const TANK_MEE_VERSIONS: readonly string[] = Object.keys(DEFAULT_CONFIGURATIONS_BY_MEE_VERSION)
  .filter((v) => !v.startsWith('1.'))
  .sort();

/** The installed SDK's default ("2.0.0" in abstractjs 1.2.3): what `getMEEVersion(DEFAULT_MEE_VERSION)` gives a dApp. */
export const DEFAULT_TANK_MEE_VERSION: string = DEFAULT_MEE_VERSION;

/** The SDK's configuration of one version (factory, bootstrap, validator), or a ValidationError naming the choices. */
export function tankMeeConfig(version: string): ReturnType<typeof getMEEVersion> {
  if (!TANK_MEE_VERSIONS.includes(version)) {
    throw new ValidationError(`MEE version ${version} is not one a gas tank can use: ${TANK_MEE_VERSIONS.join(', ')}`);
  }
  return getMEEVersion(version as MEEVersion);
}
