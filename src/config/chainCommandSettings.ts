import path from 'node:path';
import { ConfigError } from './config.js';
import { booleanFromEnv, productionFromEnv } from './envValues.js';
import { unknownSettings } from './knownSettings.js';
import { type SignerSetting, signerFromEnv } from './signerSettings.js';

/**
 * What the CLI's commands on chains alone (`paymaster …`, `signer …`) read of the configuration: the paymaster
 * signer's source, for the few that use it. Their RPC, paymaster and owner's key come from the command line and the
 * CLI's own variables. Nothing else of the service's configuration is read, so an owner runs them with an RPC URL and
 * a key (or none, to read), in production too: no PATRON_MASTER_KEY, no signer, no database (issue 33).
 */
export interface ChainCommandSettings {
  readonly production: boolean;
  /**
   * The signer's source, or why there is none (production without one, a malformed setting): parsed here with the
   * rest, refused only by a command that uses it (cli/configuredSigner.ts).
   */
  readonly signer: { readonly setting: SignerSetting } | { readonly problems: readonly string[] };
}

/**
 * Refuses (ConfigError, exit 78) only what every command must not run with: a PATRON_* name Patron does not know
 * (a typo would silently leave its default) and an unreadable production switch (the signer's default hangs on it).
 */
export function loadChainCommandSettings(env: Readonly<Record<string, string | undefined>>): ChainCommandSettings {
  const productionSwitch = booleanFromEnv('PATRON_PRODUCTION').safeParse(env.PATRON_PRODUCTION);
  const problems = [
    ...(productionSwitch.success ? [] : productionSwitch.error.issues.map((i) => i.message)),
    ...unknownSettings(env),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  const production = productionFromEnv(env);
  const source = signerFromEnv({ env, production, dataDir: path.resolve(env.PATRON_DATA_DIR || './data') });
  return Object.freeze({
    production,
    signer: source.signer === undefined ? { problems: source.problems } : { setting: source.signer },
  });
}
