import { commands as accountCommands, type ChainCommandContext, type CommandContext } from './commands.js';
import { guaranteeCommands } from './guaranteeCommands.js';
import { keeperCommands } from './keeperCommands.js';
import { ledgerCommands } from './ledgerCommands.js';
import { masterKeyCommands } from './masterKeyCommands.js';
import { ownerCommands } from './ownerCommands.js';
import { paymasterCommands } from './paymasterCommands.js';
import { policyCommands } from './policyCommands.js';
import { restrictCommands } from './restrictCommands.js';
import { signerCommands } from './signerCommands.js';
import { tankCommands } from './tankCommands.js';
import { tokenCommands } from './tokenCommands.js';

/** A command `runCli` runs with the configuration (less the signer), the storage and the master key open. */
export type CliCommand = (ctx: CommandContext) => Promise<void>;

/** A command on chains alone: run with the signer's settings only (no service configuration, storage or key). */
export type ChainCommand = (ctx: ChainCommandContext) => Promise<void>;

/** A command and what `runCli` opens for it: nothing but the chain (`chain`), or the storage and the master key. */
export type CliEntry =
  | { readonly needs: 'chain'; readonly run: ChainCommand }
  | { readonly needs: 'store'; readonly run: CliCommand };

/** The commands on chains alone, by name: the paymaster's and the signer's. */
const CHAIN_MAPS: readonly Readonly<Record<string, ChainCommand>>[] = [
  paymasterCommands,
  ownerCommands,
  signerCommands,
];

const STORE_MAPS: readonly Readonly<Record<string, CliCommand>>[] = [
  accountCommands,
  policyCommands,
  restrictCommands,
  ledgerCommands,
  masterKeyCommands,
  tokenCommands,
  guaranteeCommands,
  keeperCommands,
  tankCommands,
];

/**
 * Every command `runCli` looks up, by its words (`dapp tokens show|set|clear`, `dapp guarantees show|on|off` are ones of three): the one table
 * the CLI dispatches from and the docs tests check docs/ against, so a new command map is listed here once. A name
 * in two maps throws on load, as the merge would otherwise keep one of them silently.
 */
export const cliCommands: Readonly<Record<string, CliEntry>> = mergeCommandMaps([
  ...CHAIN_MAPS.map((map) => tagged(map, (run): CliEntry => ({ needs: 'chain', run }))),
  ...STORE_MAPS.map((map) => tagged(map, (run): CliEntry => ({ needs: 'store', run }))),
]);

/**
 * Every command name a user can type: the table's, and those that run before it is consulted, as they need no
 * storage (`start` is the service, in bin.ts; `version`, `healthcheck` and `master-key generate` are handled first in main.ts,
 * before any configuration exists).
 */
export const cliCommandNames: readonly string[] = [
  'start',
  'version',
  'healthcheck',
  'master-key generate',
  ...Object.keys(cliCommands),
];

function tagged<C>(map: Readonly<Record<string, C>>, tag: (run: C) => CliEntry): Record<string, CliEntry> {
  return Object.fromEntries(Object.entries(map).map(([name, run]) => [name, tag(run)]));
}

function mergeCommandMaps<C>(maps: readonly Readonly<Record<string, C>>[]): Record<string, C> {
  const table: Record<string, C> = {};
  for (const map of maps) {
    for (const [name, command] of Object.entries(map)) {
      if (Object.hasOwn(table, name)) throw new Error(`the CLI command "${name}" is defined in two command maps`);
      table[name] = command;
    }
  }
  return table;
}
