import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  http,
  type PublicClient,
  parseUnits,
} from 'viem';
import { type TankView, toTankView } from '../api/adminMeeTanks.js';
import { loadChainCommandSettings } from '../config/chainCommandSettings.js';
import { type TankSignerRef, tankSignerRefSchema } from '../config/tankSignerRef.js';
import { selectCryptoBackend } from '../crypto/cryptoBackend.js';
import { NotFoundError, ValidationError } from '../errors/PatronError.js';
import { createGasTank } from '../mee/createGasTank.js';
import { readTankBalance } from '../mee/tankChainReads.js';
import { readTankOwner } from '../mee/tankOwner.js';
import type { MeeTank } from '../store/tenants/meeTankRepository.js';
import { addressOption, option, requireOption } from './cliOptions.js';
import { printResult, table } from './cliOutput.js';
import { cliServedChainIds } from './cliServedChainIds.js';
import type { CommandContext } from './commands.js';
import { transactionKeySource } from './transactionKey.js';

/**
 * `patron tank create|list|show|fund|alert|retire`: Biconomy MEE gas tanks, the server operator's objects
 * (docs/guides/mee-gas-tanks.md; docs/reference/cli.md, "Gas tanks"). Deploying a tank and withdrawing from it are
 * Nexus operations through an MEE node (abstractjs's `toGasTankAccount`), not commands here.
 */

function chainIdOption(ctx: CommandContext): number {
  const v = ctx.options.chain;
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  if (typeof s !== 'string' || !/^[1-9][0-9]{0,15}$/.test(s)) throw new ValidationError('--chain must be a chain id');
  return Number(s);
}

/** The tank's chain: --rpc, else PATRON_CHAINS' URL for it, else the running service's dev chain (/chain/{id}). */
function chainClient(ctx: CommandContext, chainId: number): PublicClient {
  const configured = ctx.config.paymaster.chains.find((c) => c.chainId === chainId)?.rpcUrl;
  const url = option(ctx, 'rpc') ?? configured ?? `${ctx.serviceUrl}/chain/${chainId}`;
  if (!/^https?:\/\//.test(url)) throw new ValidationError('--rpc must be an http(s) JSON-RPC URL');
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  return createPublicClient({ chain, transport: http(url, { retryCount: 0 }) });
}

function signerOption(ctx: CommandContext): TankSignerRef {
  const text = requireOption(ctx, 'signer');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ValidationError('--signer is not valid JSON');
  }
  const parsed = tankSignerRefSchema.safeParse(json);
  if (!parsed.success) throw new ValidationError(`--signer: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

/** A token amount in whole units ("12.5"), as base units of a token of `decimals`. */
function amountOption(ctx: CommandContext, name: string, decimals: number): bigint {
  const v = requireOption(ctx, name);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || (v.split('.')[1]?.length ?? 0) > decimals) {
    throw new ValidationError(`--${name} must be an amount of the token (e.g. 12.5), at most ${decimals} decimals`);
  }
  return parseUnits(v, decimals);
}

async function tankOption(ctx: CommandContext): Promise<MeeTank> {
  const id = requireOption(ctx, 'id');
  const tank = await ctx.meeTanks.get(id);
  if (tank === undefined) throw new NotFoundError(`No gas tank ${id}`);
  return tank;
}

const units = (t: Pick<MeeTank, 'tokenDecimals'>, v: bigint | undefined) =>
  v === undefined ? 'none' : formatUnits(v, t.tokenDecimals);

function describe(t: MeeTank, view: TankView): string[] {
  return [
    `gas tank ${t.id} (${t.status}) of dApp ${t.dappId}`,
    `  chain ${t.chainId}, address ${view.address}, MEE ${t.meeVersion}`,
    `  token ${t.token} (${t.tokenDecimals} decimals), owner ${t.owner} (${t.signer.kind} key)`,
    `  low-balance alert: ${units(t, t.lowBalance)}`,
    `  sponsor URL path: ${view.sponsorPath}`,
  ];
}

export const tankCommands: Record<string, (ctx: CommandContext) => Promise<void>> = {
  async 'tank create'(ctx) {
    const dappId = requireOption(ctx, 'dapp');
    if ((await ctx.dapps.findById(dappId)) === undefined) throw new NotFoundError(`No dApp ${dappId}`);
    const chainId = chainIdOption(ctx);
    const client = chainClient(ctx, chainId);
    const servedChainIds = await cliServedChainIds({
      paymaster: ctx.config.paymaster,
      warn: (m) => ctx.io.stderr(`warning: ${m}\n`),
    });
    const given = option(ctx, 'address');
    const crypto = selectCryptoBackend().backend;
    const tank = await createGasTank({
      tanks: ctx.meeTanks,
      client,
      chainId,
      servedChainIds,
      dappId,
      token: addressOption(ctx, 'token'),
      signer: signerOption(ctx),
      ownerOf: (ref) => readTankOwner({ ref, crypto }),
      meeVersion: option(ctx, 'mee-version'),
      address: given === undefined ? undefined : addressOption(ctx, 'address'),
      lowBalance:
        option(ctx, 'low-balance') === undefined ? undefined : (decimals) => amountOption(ctx, 'low-balance', decimals),
      now: Date.now(),
    });
    const view = toTankView(tank);
    printResult(ctx.io, ctx.json, { ...view, addressComputed: tank.addressComputed }, [
      ...describe(tank, view),
      tank.addressComputed
        ? '  address computed from the owner at the factory on chain'
        : '  address as given (--address): the factory is not on this chain, so Patron could not check it',
      `fund it: patron tank fund --id ${tank.id} --amount <amount>`,
    ]);
  },

  async 'tank list'(ctx) {
    const dappId = option(ctx, 'dapp');
    const tanks = dappId === undefined ? await ctx.meeTanks.list() : await ctx.meeTanks.listForDapp(dappId);
    const views = tanks.map(toTankView);
    printResult(
      ctx.io,
      ctx.json,
      { tanks: views },
      table(
        views.map((v) => ({ ...v, dapp: v.dappId, chain: v.chainId })),
        ['id', 'dapp', 'chain', 'address', 'token', 'status'],
      ),
    );
  },

  async 'tank show'(ctx) {
    const tank = await tankOption(ctx);
    const view = toTankView(tank);
    const balance = await readTankBalance({
      client: chainClient(ctx, tank.chainId),
      token: tank.token,
      holder: tank.address,
    });
    const low = tank.lowBalance !== undefined && balance < tank.lowBalance;
    printResult(ctx.io, ctx.json, { ...view, balance: balance.toString(), belowLowBalance: low }, [
      ...describe(tank, view),
      `  balance: ${units(tank, balance)}${low ? ' (below the low-balance alert)' : ''}`,
    ]);
  },

  async 'tank fund'(ctx) {
    const tank = await tankOption(ctx);
    if (tank.status !== 'active') throw new ValidationError(`gas tank ${tank.id} is retired: fund an active tank`);
    const amount = amountOption(ctx, 'amount', tank.tokenDecimals);
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [tank.address, amount] });
    const transfer = {
      chainId: tank.chainId,
      to: tank.token,
      data,
      amount: amount.toString(),
      recipient: tank.address,
    };
    const chainCtx = { ...ctx, signer: loadChainCommandSettings(ctx.env).signer };
    const source = transactionKeySource(chainCtx);
    if (source === undefined) {
      // No key here: the transfer to make from wherever the funds are (a Safe, an exchange, a hardware wallet).
      printResult(ctx.io, ctx.json, { sent: false, transfer }, [
        `no key given (--keystore, --pkcs11-key, --kms-key or PATRON_DEPLOYER_PRIVATE_KEY): nothing sent`,
        `send ${units(tank, amount)} of token ${tank.token} on chain ${tank.chainId} to the tank ${tank.address}:`,
        `  to ${tank.token}`,
        `  data ${data}`,
      ]);
      return;
    }
    const account = await source.load();
    const client = chainClient(ctx, tank.chainId);
    const wallet = createWalletClient({
      account,
      chain: client.chain,
      transport: http(client.chain?.rpcUrls.default.http[0]),
    });
    const hash = await wallet.sendTransaction({ to: tank.token, data, chain: client.chain });
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success')
      throw new ValidationError(`the transfer reverted (tx ${hash}): does ${account.address} hold the tokens?`);
    const balance = await readTankBalance({ client, token: tank.token, holder: tank.address });
    printResult(
      ctx.io,
      ctx.json,
      { sent: true, transfer, from: account.address, txHash: hash, balance: balance.toString() },
      [
        `sent ${units(tank, amount)} from ${account.address} (${source.description}) to gas tank ${tank.id}: tx ${hash}`,
        `  balance now ${units(tank, balance)}`,
      ],
    );
  },

  async 'tank alert'(ctx) {
    const tank = await tankOption(ctx);
    const clear = ctx.options.clear === true;
    if (clear === (option(ctx, 'low-balance') !== undefined)) {
      throw new ValidationError('give --low-balance AMOUNT or --clear');
    }
    const lowBalance = clear ? undefined : amountOption(ctx, 'low-balance', tank.tokenDecimals);
    const updated = (await ctx.meeTanks.setLowBalance({ id: tank.id, lowBalance })) ?? tank;
    printResult(ctx.io, ctx.json, toTankView(updated), [
      `gas tank ${tank.id}: low-balance alert ${units(tank, lowBalance)}`,
    ]);
  },

  async 'tank retire'(ctx) {
    const tank = await tankOption(ctx);
    const retired = (await ctx.meeTanks.retire({ id: tank.id, now: Date.now() })) ?? tank;
    printResult(ctx.io, ctx.json, toTankView(retired), [
      `gas tank ${tank.id} retired: Patron signs nothing more from it`,
      `  its balance stays at ${tank.address} on chain ${tank.chainId}: withdraw it with the owner key (abstractjs toGasTankAccount().withdraw)`,
    ]);
  },
};
