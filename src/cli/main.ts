import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildAccounts } from '../accounts/buildAccounts.js';
import { checkedMasterKey } from '../accounts/masterKey.js';
import { loadChainCommandSettings } from '../config/chainCommandSettings.js';
import { ConfigError, type ConfigWithoutSigner, loadConfigWithoutSigner } from '../config/config.js';
import { createSecretBox } from '../crypto/secretBox.js';
import { errorSummary } from '../errors/errorSummary.js';
import { PatronError } from '../errors/PatronError.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';
import { createPolicyService } from '../policies/policyService.js';
import { newestMigration } from '../store/db/migrate.js';
import { openStore, type Store } from '../store/store.js';
import { patronVersion } from '../version.js';
import type { CliIo } from './cliOutput.js';
import { cliServedChainIds } from './cliServedChainIds.js';
import { USAGE } from './commands.js';
import { cliCommands } from './commandTable.js';
import { runHealthcheck } from './healthcheck.js';
import { generateMasterKey } from './masterKeyCommands.js';
import { generateSignerKeystore } from './signerCommands.js';
import { runSmokeTestCommand } from './smokeTestCommand.js';

/**
 * `patron` CLI: runs a command against the same storage as the server and returns the exit code.
 * `store` may be passed in by tests; otherwise it is opened from the configuration.
 */
/** Exit codes: docs/reference/exit-codes.md. */
const EXIT_CONFIG = 78;

export async function runCli(args: {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  io: CliIo;
  store?: Store;
  masterKey?: Buffer;
}): Promise<number> {
  const { io } = args;
  // The container's health check: the running service's probe, from PORT and HOST alone, with options of its own.
  if (args.argv[0] === 'healthcheck') return runHealthcheck({ argv: args.argv.slice(1), env: args.env, io });
  let json = args.argv.includes('--json');
  const fail = (message: string, code = 1) => {
    if (json) io.stdout(`${JSON.stringify({ error: { message } })}\n`);
    else io.stderr(`patron: ${message}\n`);
    return code;
  };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args.argv);
  } catch (err) {
    return fail(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`, 2);
  }
  json = parsed.values.json === true;
  // `dapp tokens show|set|clear` is the one three-word command; every other command has two words.
  const three = parsed.positionals.slice(0, 3).join(' ');
  const threeWords = parsed.positionals.length === 3 && Object.hasOwn(cliCommands, three);
  const name = threeWords ? three : parsed.positionals.slice(0, 2).join(' ');
  // Own names only: `patron toString` is no command, whatever Object.prototype holds.
  const command = Object.hasOwn(cliCommands, name) ? cliCommands[name] : undefined;
  // The build a script or an operator is talking to: no configuration, storage or key needed.
  if (parsed.values.version === true || (name === 'version' && parsed.positionals.length === 1)) {
    const info = { version: patronVersion(), schema: newestMigration(), node: process.version };
    io.stdout(
      json ? `${JSON.stringify(info)}\n` : `patron ${info.version} (schema ${info.schema}, Node.js ${info.node})\n`,
    );
    return 0;
  }
  if (parsed.values.help === true || parsed.positionals.length === 0) {
    io.stdout(USAGE);
    return 0;
  }
  if (name === 'master-key generate' && parsed.positionals.length === 2) {
    generateMasterKey({ io, json });
    return 0;
  }
  if (name === 'signer keystore' && parsed.values.generate === true && parsed.positionals.length === 2) {
    try {
      generateSignerKeystore({ io, json, out: parsed.values.out, env: args.env });
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
    return 0;
  }
  if (command === undefined || parsed.positionals.length > (threeWords ? 3 : 2))
    return fail(`unknown command "${parsed.positionals.join(' ')}"\n\n${USAGE}`, 2);
  const failure = (err: unknown) => {
    if (err instanceof PatronError && err.code !== 'INTERNAL') return fail(err.shortMessage);
    // The configuration or the stored state is wrong (78, sysexits' EX_CONFIG), as the server exits on it.
    if (err instanceof ConfigError || err instanceof StartRefusedError) return fail(err.message, EXIT_CONFIG);
    // A fault of Patron's own code is called so, to be reported; anything else the world did (an RPC that does not
    // answer, a file that is not there, a transaction that reverted) is said in one line, URLs cut to their origin
    // (an RPC's API key rides in its path or query).
    const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
    return fail(bug ? `unexpected error: ${errorSummary(err)}` : errorSummary(err));
  };
  // The smoke test of a deployed Patron runs on an operator's machine: no configuration, no storage, no master key.
  if (name === 'demo' && parsed.values['api-key'] !== undefined) {
    try {
      await runSmokeTestCommand({ options: parsed.values, env: args.env, io, json });
      return 0;
    } catch (err) {
      return failure(err);
    }
  }

  // A command on chains alone: neither the service's configuration nor the storage nor the master key, so an owner
  // runs it with an RPC URL and a key in production too, and nothing is created where it runs (issue 33).
  if (command.needs === 'chain') {
    try {
      const { signer } = loadChainCommandSettings(args.env);
      await command.run({ io, json, options: parsed.values, signer, env: args.env });
      return 0;
    } catch (err) {
      return failure(err);
    }
  }

  let store = args.store;
  try {
    // Everything but the signer, which no storage command uses (production mode asks the service for one).
    const config = loadConfigWithoutSigner(args.env);
    store ??= await openExistingStore(config);
    // Before any command: one that opens a secret with a wrong key would fail with the cipher's own message. The
    // CLI reads the data directory's key file and never writes one (the service does, on its first start).
    const { key: masterKey, source } = await checkedMasterKey({
      config,
      store,
      key: args.masterKey,
      createKeyFile: false,
      now: Date.now,
    });
    // As the server builds them (deps.ts), but the CLI is short-lived and must see other processes' writes: no caching.
    const noCache = { ttlMs: 0, maxEntries: 100 };
    const { accounts, sessions } = buildAccounts({
      config,
      store,
      secretBox: createSecretBox(masterKey),
      cache: noCache,
      now: Date.now,
      logger: { warn: (obj, msg) => io.stderr(`warning: ${msg} ${JSON.stringify(obj)}\n`) },
      servedChainIds: await cliServedChainIds({
        paymaster: config.paymaster,
        warn: (message) => io.stderr(`warning: ${message}\n`),
      }),
    });
    const policies = createPolicyService({ store, cache: noCache, now: Date.now });
    const serviceUrl =
      config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    await command.run({
      accounts,
      sessions,
      policies,
      ledger: store.ledger,
      depositTopups: store.depositTopups,
      meeTanks: store.meeTanks,
      dapps: store.dapps,
      masterKey: { key: masterKey, source, secrets: store.sealedSecrets },
      io,
      json,
      options: parsed.values,
      serviceUrl,
      config,
      env: args.env,
    });
    return 0;
  } catch (err) {
    return failure(err);
  } finally {
    if (args.store === undefined) await store?.close();
  }
}

/**
 * The service's database: PostgreSQL as configured, or the embedded SQLite file only if it exists. A command run
 * where the data directory is not (a typo of PATRON_DATA_DIR, a shell in another directory) would otherwise create an
 * empty database there, and report an empty one as if it were the service's.
 */
async function openExistingStore(config: ConfigWithoutSigner): Promise<Store> {
  const { storage } = config;
  if (storage.kind === 'sqlite' && !existsSync(storage.file)) {
    throw new ConfigError([
      `no database at ${storage.file} (PATRON_DATA_DIR, by default ./data of the current directory): the CLI opens the service's database and never creates one; set PATRON_DATA_DIR or DATABASE_URL as the service has them, or start the service once to create it`,
    ]);
  }
  return openStore({ storage });
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      email: { type: 'string' },
      account: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
      chain: { type: 'string', multiple: true },
      url: { type: 'string' },
      rpc: { type: 'string' },
      paymaster: { type: 'string' },
      amount: { type: 'string' },
      owner: { type: 'string' },
      signer: { type: 'string' },
      'entry-point': { type: 'string' },
      'entry-point-version': { type: 'string' },
      out: { type: 'string' },
      generate: { type: 'boolean' },
      'password-stdin': { type: 'boolean' },
      set: { type: 'string' },
      clear: { type: 'boolean' },
      origins: { type: 'string', multiple: true },
      'allow-no-origin': { type: 'boolean' },
      cidrs: { type: 'string', multiple: true },
      methods: { type: 'string', multiple: true },
      dapp: { type: 'string' },
      rules: { type: 'string' },
      'rules-file': { type: 'string' },
      settings: { type: 'string' },
      'settings-file': { type: 'string' },
      active: { type: 'string' },
      sender: { type: 'string' },
      user: { type: 'string' },
      to: { type: 'string' },
      receiver: { type: 'string' },
      token: { type: 'string' },
      'unstake-delay': { type: 'string' },
      keystore: { type: 'string' },
      'pkcs11-key': { type: 'string' },
      'kms-key': { type: 'string' },
      'dry-run': { type: 'boolean' },
      'emergency-stop': { type: 'boolean' },
      'api-key': { type: 'string' },
      bundler: { type: 'string' },
      factory: { type: 'string' },
      'webhook-data': { type: 'string' },
      from: { type: 'string' },
      status: { type: 'string' },
      policy: { type: 'string' },
      'group-by': { type: 'string' },
      limit: { type: 'string' },
      before: { type: 'string' },
      cursor: { type: 'string' },
      'cap-wei': { type: 'string' },
      address: { type: 'string' },
      'mee-version': { type: 'string' },
      'low-balance': { type: 'string' },
      resets: { type: 'string' },
    },
  });
}
