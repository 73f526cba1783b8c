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
import { tokenCommands } from './tokenCommands.js';

/** A command `runCli` runs with the configuration, the storage and the master key open. */
export type CliCommand = (ctx: CommandContext) => Promise<void>;

/** A command on chains alone: run with the configuration only (no storage, no master key). */
export type ChainCommand = (ctx: ChainCommandContext) => Promise<void>;

/** The commands on chains alone, by name: the paymaster's and the signer's. */
export const chainCommands: Readonly<Record<string, ChainCommand>> = mergeCommandMaps([
  paymasterCommands,
  ownerCommands,
  signerCommands,
]);

const COMMAND_MAPS: readonly Readonly<Record<string, CliCommand>>[] = [
  accountCommands,
  paymasterCommands,
  ownerCommands,
  signerCommands,
  policyCommands,
  restrictCommands,
  ledgerCommands,
  masterKeyCommands,
  tokenCommands,
  guaranteeCommands,
  keeperCommands,
];

/**
 * Every command `runCli` looks up, by its words (`dapp tokens show|set|clear`, `dapp guarantees show|on|off` are ones of three): the one table
 * the CLI dispatches from and the docs tests check docs/ against, so a new command map is listed here once. A name
 * in two maps throws on load, as the merge would otherwise keep one of them silently.
 */
export const cliCommands: Readonly<Record<string, CliCommand>> = mergeCommandMaps(COMMAND_MAPS);

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
