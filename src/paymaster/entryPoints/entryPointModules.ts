import type { EntryPointVersion } from '../../chain/chainRegistry.js';
import { UnsupportedError } from '../../errors/PatronError.js';
import type { EntryPointModule } from './entryPointModule.js';
import { entryPointV06 } from './entryPointV06.js';

/** The module of each EntryPoint version Patron signs for (entryPointModule.ts): a table, not a switch. */
const MODULES: Readonly<Partial<Record<EntryPointVersion, EntryPointModule>>> = { '0.6': entryPointV06 };

export function entryPointModule(version: EntryPointVersion): EntryPointModule {
  const m = MODULES[version];
  if (m === undefined) throw new UnsupportedError(`EntryPoint v${version} is not served by this Patron`);
  return m;
}
