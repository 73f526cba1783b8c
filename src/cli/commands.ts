import type { AccountService } from '../accounts/accountService.js';
import type { SessionService } from '../accounts/sessionService.js';
import { toAccountView } from '../api/adminAccount.js';
import { toDappView } from '../api/adminDapps.js';
import { toTokenView } from '../api/adminTokens.js';
import type { ChainCommandSettings } from '../config/chainCommandSettings.js';
import type { ConfigWithoutSigner } from '../config/config.js';
import { dappLimitsToJson } from '../dappSettings/dappLimits.js';
import { ValidationError } from '../errors/PatronError.js';
import type { PolicyService } from '../policies/policyService.js';
import type { DepositTopupRepository } from '../store/ledger/depositTopupRepository.js';
import type { LedgerQueryRepository } from '../store/ledger/ledgerQueryRepository.js';
import type { Account } from '../store/records.js';
import type { DappRepository } from '../store/tenants/dappRepository.js';
import type { MeeTankRepository } from '../store/tenants/meeTankRepository.js';
import type { SealedSecretsRepository } from '../store/tenants/sealedSecretsRepository.js';
import { type CliIo, printResult, table } from './cliOutput.js';
import { runDemo } from './demo.js';

/**
 * What a command that works on chains alone gets (the paymaster's and the signer's commands): the signer's source,
 * the environment, the output and the options. `runCli` runs these without the service's configuration, the storage
 * or the master key, so they need none of them and create no database and no key file where they run.
 */
export interface ChainCommandContext {
  /** The paymaster signer's source, or why there is none: refused only where used (configuredSigner.ts). */
  readonly signer: ChainCommandSettings['signer'];
  /** The environment, for secrets that must not be command-line arguments (they would show in `ps`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: CliIo;
  readonly json: boolean;
  readonly options: Readonly<Record<string, string | string[] | boolean | undefined>>;
}

export interface CommandContext {
  readonly accounts: AccountService;
  /** Dashboard passwords and sessions. */
  readonly sessions: SessionService;
  /** dApps' sponsorship policies (policyCommands.ts). */
  readonly policies: PolicyService;
  /** The itemized ledger's reads (ledgerCommands.ts). */
  readonly ledger: LedgerQueryRepository;
  /** The deposit keeper's top-ups (keeperCommands.ts). */
  readonly depositTopups: DepositTopupRepository;
  /** Biconomy MEE gas tanks (tankCommands.ts), and the dApps they belong to. */
  readonly meeTanks: MeeTankRepository;
  readonly dapps: Pick<DappRepository, 'findById'>;
  /** The master key the command runs with (checked against the database), how it was given, and what it seals. */
  readonly masterKey: { readonly key: Buffer; readonly source: string; readonly secrets: SealedSecretsRepository };
  /** Where the running service answers (PATRON_PUBLIC_URL, else HOST:PORT), for commands that call it. */
  readonly serviceUrl: string;
  /** The service's configuration less the signer, which no storage command uses. */
  readonly config: ConfigWithoutSigner;
  /** The environment, for secrets that must not be command-line arguments (they would show in `ps`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: CliIo;
  readonly json: boolean;
  readonly options: Readonly<Record<string, string | string[] | boolean | undefined>>;
}

type Command = (ctx: CommandContext) => Promise<void>;

function stringOption(ctx: CommandContext, name: string, required: true): string;
function stringOption(ctx: CommandContext, name: string, required: false): string | undefined;
function stringOption(ctx: CommandContext, name: string, required: boolean): string | undefined {
  const v = ctx.options[name];
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  if (typeof s !== 'string' || s === '') {
    if (required) throw new ValidationError(`--${name} is required`);
    return undefined;
  }
  return s;
}

function chainOption(ctx: CommandContext, required: boolean): number[] | undefined {
  const v = ctx.options.chain;
  const list = (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).flatMap((s) => s.split(','));
  if (list.length === 0) {
    if (required) throw new ValidationError('--chain is required (repeat it or separate ids with commas)');
    return undefined;
  }
  return list.map((s) => {
    if (!/^\d+$/.test(s.trim())) throw new ValidationError(`--chain takes chain ids, got "${s}"`);
    return Number(s.trim());
  });
}

/** `--account` by id or email; may be left out while there is exactly one account. */
export async function accountOption(ctx: CommandContext): Promise<Account> {
  const ref = stringOption(ctx, 'account', false);
  if (ref !== undefined) {
    const account = await ctx.accounts.findAccount(ref);
    if (account === undefined) throw new ValidationError(`No account ${ref}`);
    return account;
  }
  const all = await ctx.accounts.listAccounts();
  if (all.length === 1 && all[0] !== undefined) return all[0];
  throw new ValidationError(
    all.length === 0
      ? 'No account yet: run `patron account create --email …`'
      : '--account is required when there is more than one account',
  );
}

export const commands: Record<string, Command> = {
  async 'account create'(ctx) {
    const account = await ctx.accounts.createAccount({ email: stringOption(ctx, 'email', true) });
    printResult(ctx.io, ctx.json, { account: toAccountView(account) }, [
      `Created account ${account.email} (${account.id})`,
    ]);
  },

  // The password comes from PATRON_PASSWORD or standard input, never argv (it would show in `ps` and history).
  async 'account set-password'(ctx) {
    const email = stringOption(ctx, 'email', true);
    // Any member of a team signs in with their own email: the account's first owner, or a member an owner added.
    const member = await ctx.accounts.findMember(email);
    const account = member && (await ctx.accounts.findAccount(member.accountId));
    if (member === undefined || account === undefined) throw new ValidationError(`No account ${email}`);
    let password = ctx.env.PATRON_PASSWORD;
    if (ctx.options['password-stdin'] === true) {
      if (ctx.io.readStdin === undefined) throw new ValidationError('standard input is not available');
      password = (await ctx.io.readStdin()).replace(/\r?\n$/, '');
    }
    if (password === undefined || password === '') {
      throw new ValidationError('give the password in PATRON_PASSWORD or on standard input with --password-stdin');
    }
    await ctx.sessions.setPassword({ memberId: member.id, password });
    printResult(ctx.io, ctx.json, { account: toAccountView(account), passwordSet: true }, [
      `Dashboard password set for ${member.email}; their dashboard sessions were signed out.`,
    ]);
  },

  async 'account list'(ctx) {
    const accounts = (await ctx.accounts.listAccounts()).map(toAccountView);
    printResult(ctx.io, ctx.json, { accounts }, table(accounts, ['accountId', 'email', 'createdAt']));
  },

  async 'token create'(ctx) {
    const account = await accountOption(ctx);
    const name = stringOption(ctx, 'name', false);
    const { token, secret } = await ctx.accounts.createToken({
      accountId: account.id,
      ...(name === undefined ? {} : { name }),
    });
    printResult(ctx.io, ctx.json, { token: { ...toTokenView(token), authToken: secret } }, [
      `Auth token for ${account.email} (shown only now, store it safely):`,
      `  ${secret}`,
      `  id ${token.id}`,
    ]);
  },

  async 'token list'(ctx) {
    const account = await accountOption(ctx);
    const tokens = (await ctx.accounts.listTokens(account.id)).map(toTokenView);
    printResult(
      ctx.io,
      ctx.json,
      { tokens },
      table(tokens, ['tokenId', 'name', 'prefix', 'createdAt', 'lastUsedAt', 'revokedAt']),
    );
  },

  async 'token revoke'(ctx) {
    const account = await accountOption(ctx);
    const tokenId = stringOption(ctx, 'id', true);
    await ctx.accounts.revokeToken({ accountId: account.id, tokenId });
    printResult(ctx.io, ctx.json, { revoked: tokenId }, [`Revoked auth token ${tokenId}`]);
  },

  async 'dapp create'(ctx) {
    const account = await accountOption(ctx);
    const dapp = await ctx.accounts.createDapp({
      accountId: account.id,
      name: stringOption(ctx, 'name', true),
      chainIds: chainOption(ctx, true),
    });
    printResult(ctx.io, ctx.json, { dapp: toDappView(dapp) }, [
      `Created dApp "${dapp.name}" (${dapp.id}) on chains ${dapp.chainIds.join(', ')}`,
      `  apiKey ${dapp.apiKey}`,
    ]);
  },

  async 'dapp list'(ctx) {
    const account = await accountOption(ctx);
    const dapps = (await ctx.accounts.listDapps(account.id)).map(toDappView);
    printResult(
      ctx.io,
      ctx.json,
      { dapps },
      table(
        dapps.map((d) => ({ ...d, chainIds: d.chainIds.join(',') })),
        ['dappId', 'name', 'chainIds', 'apiKey', 'createdAt'],
      ),
    );
  },

  async 'dapp update'(ctx) {
    const account = await accountOption(ctx);
    const name = stringOption(ctx, 'name', false);
    const chainIds = chainOption(ctx, false);
    const dapp = await ctx.accounts.updateDapp({
      accountId: account.id,
      dappId: stringOption(ctx, 'id', true),
      ...(name === undefined ? {} : { name }),
      ...(chainIds === undefined ? {} : { chainIds }),
    });
    printResult(ctx.io, ctx.json, { dapp: toDappView(dapp) }, [
      `Updated dApp "${dapp.name}" (${dapp.id}), chains ${dapp.chainIds.join(', ')}`,
    ]);
  },

  async demo(ctx) {
    const url = stringOption(ctx, 'url', false) ?? ctx.serviceUrl;
    const account = stringOption(ctx, 'account', false);
    const bundler = stringOption(ctx, 'bundler', false);
    const lines: string[] = [];
    await runDemo({
      baseUrl: url.replace(/\/$/, ''),
      accounts: ctx.accounts,
      ...(account === undefined ? {} : { accountRef: account }),
      ...(bundler === undefined ? {} : { bundlerUrl: bundler }),
      print: (line) => (ctx.json ? lines.push(line) : ctx.io.stdout(`${line}\n`)),
    });
    if (ctx.json) ctx.io.stdout(`${JSON.stringify({ demo: lines })}\n`);
  },

  async 'dapp rotate-key'(ctx) {
    const account = await accountOption(ctx);
    const dapp = await ctx.accounts.rotateApiKey({ accountId: account.id, dappId: stringOption(ctx, 'id', true) });
    printResult(ctx.io, ctx.json, { dapp: toDappView(dapp) }, [`New API key of "${dapp.name}": ${dapp.apiKey}`]);
  },

  /** Operator limits of any dApp: shown, replaced with --set JSON, or removed with --clear. */
  async 'dapp limits'(ctx) {
    const dappId = stringOption(ctx, 'id', true);
    const set = stringOption(ctx, 'set', false);
    let limits: unknown;
    if (ctx.options.clear === true) limits = {};
    else if (set !== undefined) {
      try {
        limits = JSON.parse(set);
      } catch {
        throw new ValidationError(
          '--set takes a JSON object, e.g. \'{"bounds":{"maxOpCostWei":"10000000000000000"}}\'',
        );
      }
    }
    const dapp =
      limits === undefined
        ? await ctx.accounts.findDappById(dappId)
        : await ctx.accounts.setDappLimits({ dappId, limits });
    if (dapp === undefined) throw new ValidationError(`No dApp ${dappId}`);
    const shown = dappLimitsToJson(dapp.limits);
    printResult(ctx.io, ctx.json, { dappId: dapp.id, limits: shown }, [
      `Limits of "${dapp.name}" (${dapp.id}): ${JSON.stringify(shown)}`,
    ]);
  },
};

export const USAGE = `Usage: patron <command> [options] [--json]

  start                                               run the service (configured by environment variables)
  version       (or --version, -v)                    this build's version, database schema and Node.js version
  healthcheck   [--path /readyz] [--url BASE]         GET the running service's probe (PORT, HOST): exit 0 or 1
  demo          [--url URL] [--account ID|EMAIL] [--bundler URL]  the sponsored flow through the dev bundler
  demo --api-key KEY --url URL --chain ID --rpc NODE_URL [--bundler URL] [--entry-point-version 0.6|0.7|0.8]
       [--factory A] [--webhook-data JSON]   smoke test of a deployed Patron on a real chain: a new SimpleAccount's
       sponsored op, simulated with eth_call (spends nothing); --bundler sends it (the paymaster's deposit pays)
       (owner: a throwaway key, or PATRON_DEMO_OWNER_KEY; needs no local storage or master key)
  signer address                                     the configured paymaster signer
  signer keystore --out FILE [--generate]             encrypt it, or a new key (password: PATRON_KEYSTORE_PASSWORD)
  signer pkcs11-generate                              a key made inside the PATRON_SIGNER_PKCS11_* token
  paymaster deploy  --rpc URL [--entry-point-version 0.6|0.7|0.8|0.9] [--entry-point A (v0.6)] [--owner A] [--signer A]   (KEY)
  paymaster deposit --rpc URL --paymaster A --amount ETH                   (KEY)
  paymaster info    --rpc URL --paymaster A             deposit, owner, signers, stake
  The owner's operations, each --rpc URL --paymaster A [--dry-run] (KEY, the paymaster's owner):
  paymaster withdraw         --amount ETH|all [--to A]       the EntryPoint deposit
  paymaster stake            --amount ETH [--unstake-delay SECONDS]
  paymaster unlock-stake                                      starts the unstake delay
  paymaster withdraw-stake   [--to A]                         once the delay has passed
  paymaster add-signer       --signer A                       accept a key's signatures too (rotation, step 1)
  paymaster remove-signer    --signer A [--emergency-stop]    stop accepting a key (the last one: --emergency-stop)
  paymaster set-fee-receiver --receiver A                     who gets token-mode charges
  paymaster withdraw-tokens  --token A --amount N|all [--to A]   tokens the paymaster holds
  KEY: PATRON_DEPLOYER_PRIVATE_KEY, --keystore FILE (password: PATRON_KEYSTORE_PASSWORD), --pkcs11-key LABEL
       (on the PATRON_SIGNER_PKCS11_* token) or --kms-key KEY_ID (AWS KMS, ECC_SECG_P256K1).
  --dry-run simulates from the key's address (the owner's without a key) and prints what would change.
  --to defaults to the key's address; the EntryPoint version is read from the paymaster.

  account create --email E
  account set-password --email E [--password-stdin]   dashboard sign-in (else PATRON_PASSWORD)
  account list
  token create  [--account ID|EMAIL] [--name N]     prints the token once
  token list    [--account ID|EMAIL]
  token revoke  --id TOKEN_ID [--account ID|EMAIL]
  dapp create   --name N --chain ID [--chain ID …] [--account ID|EMAIL]
  dapp list     [--account ID|EMAIL]
  dapp update   --id DAPP_ID [--name N] [--chain ID …] [--account ID|EMAIL]
  dapp rotate-key --id DAPP_ID [--account ID|EMAIL]
  dapp limits   --id DAPP_ID [--set JSON | --clear]   operator limits (signing bounds) of any dApp
  dapp restrict --id DAPP_ID [--origins O,… [--allow-no-origin]] [--cidrs R,…] [--methods F,…] [--clear] [--account ID|EMAIL]
       who may use the API key (the flags given are the whole set; none: shows it); F: sponsorship, tokenQuotes, dryRun
  dapp tokens show|clear --id DAPP_ID [--account ID|EMAIL]   the dApp's sponsorship-token settings; clear turns them off
  dapp tokens set --id DAPP_ID (--settings JSON | --settings-file PATH) [--account ID|EMAIL]
       replace them: {"required":true,"keys":[{"kind":"jwksUrl","id":"backend","url":"https://…"}]}
  dapp guarantees show|off --id DAPP_ID               token guarantees of any dApp: mode 2, paid by the deposit if
       its charge fails (off by default; off keeps the cap)
  dapp guarantees on --id DAPP_ID --cap-wei WEI --resets hourly|daily|weekly|monthly|never   turn them on, capped
  policies list   --dapp DAPP_ID                      sponsorship policies of any dApp
  policies create --dapp DAPP_ID --name N (--rules JSON | --rules-file PATH) [--active false]
  policies get    --dapp DAPP_ID --id POLICY_ID
  policies update --dapp DAPP_ID --id POLICY_ID [--name N] [--active true|false] [--rules JSON | --rules-file PATH]
  policies delete --dapp DAPP_ID --id POLICY_ID
  policies usage  --dapp DAPP_ID --id POLICY_ID [--sender 0x…] [--user SUB]   each cap's window: used, reserved, limit
  ledger list     --dapp DAPP_ID [filters] [--limit N] [--cursor C]   signed sponsorships, newest first
  ledger stats    --dapp DAPP_ID [filters] [--group-by day|policy|user|chain[,…]]   count, reserved, settled wei, USD
  ledger export   --dapp DAPP_ID [filters] [--out FILE]   the ledger as CSV (stdout without --out)
       filters: --from DATE --to DATE --policy ID --sender 0x… --user SUB --status S --chain ID
  keeper history  [--chain ID] [--paymaster 0x…] [--limit N] [--before TIME]   the deposit keeper's top-ups, newest first
  tank create --dapp DAPP_ID --chain ID --token 0x… --signer JSON [--mee-version V] [--address 0x…] [--low-balance AMOUNT] [--rpc URL]
       register a Biconomy MEE gas tank: {"kind":"keystore","file":"/…","passwordFile":"/…"} (or pkcs11, kms)
  tank list [--dapp DAPP_ID]                         every gas tank, or one dApp's
  tank show --id TANK_ID [--rpc URL]                 one tank with its token balance read on chain
  tank fund --id TANK_ID --amount AMOUNT [--rpc URL] [key]   transfer the token to the tank (no key: prints the transfer)
  tank alert --id TANK_ID (--low-balance AMOUNT | --clear)   the low-balance alert threshold, in whole tokens
  tank retire --id TANK_ID                           Patron signs nothing more from it (its funds stay; withdraw them)
  master-key generate                                 prints a fresh key for PATRON_MASTER_KEY
  master-key rotate                                   re-encrypts every secret with PATRON_NEW_MASTER_KEY (stop the service first)

--account may be left out while there is exactly one account.
--json prints one JSON object (errors too: {"error":{"message":…}}) for scripts.
Storage: the same PATRON_DATA_DIR or DATABASE_URL as the server; safe while the server runs.
`;
