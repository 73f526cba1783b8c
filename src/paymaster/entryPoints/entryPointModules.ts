import type { EntryPointVersion } from '../../chain/chainRegistry.js';
import type { EntryPointModule } from './entryPointModule.js';
import { entryPointV06 } from './v06/entryPointV06.js';
import { entryPointV07, entryPointV08, entryPointV09 } from './v07/entryPointV07.js';

/** The module of each EntryPoint version Patron signs for (entryPointModule.ts): a table, not a switch. */
const MODULES: Readonly<Record<EntryPointVersion, EntryPointModule>> = {
  '0.6': entryPointV06,
  '0.7': entryPointV07,
  '0.8': entryPointV08,
  '0.9': entryPointV09,
};

export function entryPointModule(version: EntryPointVersion): EntryPointModule {
  return MODULES[version];
}
