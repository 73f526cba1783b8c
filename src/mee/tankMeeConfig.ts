import { DEFAULT_MEE_VERSION, getMEEVersion, type MEEVersion } from '@biconomy/abstractjs';
import { ValidationError } from '../errors/PatronError.js';
import { TANK_MEE_VERSIONS } from './meeVersions.js';

/*
 * What creating a tank takes from the installed abstractjs: a file of its own, imported only by the CLI's
 * `tank create` (createGasTank.ts, tankAddress.ts), so the service never loads the SDK (its heap would grow by it,
 * and the sponsored hot path measured ~30 µs of CPU per request more, in GC, while it did).
 */
/** The installed SDK's default ("2.0.0" in abstractjs 1.2.3): what `getMEEVersion(DEFAULT_MEE_VERSION)` gives a dApp. */
export const DEFAULT_TANK_MEE_VERSION: string = DEFAULT_MEE_VERSION;

/** The SDK's configuration of one version (factory, bootstrap, validator), or a ValidationError naming the choices. */
export function tankMeeConfig(version: string): ReturnType<typeof getMEEVersion> {
  if (!TANK_MEE_VERSIONS.includes(version)) {
    throw new ValidationError(`MEE version ${version} is not one a gas tank can use: ${TANK_MEE_VERSIONS.join(', ')}`);
  }
  return getMEEVersion(version as MEEVersion);
}
