import { type Address, getAddress, type Hex, isAddressEqual } from 'viem';
import { opKey } from '../chain/opKey.js';
import { ChainNotServedError, NotFoundError, ValidationError } from '../errors/PatronError.js';
import { issuedSignature, type RequestFact, signatureFingerprint } from '../paymaster/requestFacts.js';
import type { SenderAccount } from '../policies/knownAccounts.js';
import type { PolicyGate, PolicyPass, PolicyRequest } from '../policies/policyGate.js';
import { assertTokenCalls, type SponsorshipGrant } from '../sponsorshipTokens/sponsorshipGrant.js';
import type { MeeNonceLaneRepository } from '../store/tenants/meeNonceLaneRepository.js';
import type { MeeTank } from '../store/tenants/meeTankRepository.js';
import { checkMeeQuote } from './checkMeeQuote.js';
import { MeeQuoteRefusedError } from './MeeQuoteRefusedError.js';
import { type MeeQuote, meeQuoteSchema, type QuotedOp } from './meeQuote.js';
import { isMeeVersion, MEE_VERSIONS, type MeeVersion, meeNonceKey } from './meeVersions.js';
import { meeSponsorSignature } from './sponsorSignature.js';

/** A gas tank as the sponsor endpoints need it (store/tenants/meeTankRepository.ts has the record). */
export type SponsorTank = Pick<
  MeeTank,
  'id' | 'dappId' | 'chainId' | 'address' | 'token' | 'tokenDecimals' | 'meeVersion' | 'status' | 'signer' | 'owner'
>;

/** A token's and the native coin's USD prices on a chain (18-decimal fixed point), as the token catalog has them. */
export interface TankPrices {
  readonly tokenUsdE18: bigint;
  readonly nativeUsdE18: bigint;
}

/** How long a nonce lane waits for its quote's signature (abstractjs asks for the nonce, then the node's quote). */
export const MEE_LANE_TTL_MS = 10 * 60_000;

export interface MeeSponsorDeps {
  readonly findTank: (args: {
    readonly chainId: number;
    readonly address: Address;
  }) => Promise<SponsorTank | undefined>;
  readonly tanksOf: (dappId: string) => Promise<readonly SponsorTank[]>;
  /** Every tank address Patron holds, any chain, any status, lower-case. */
  readonly tankAddresses: () => Promise<ReadonlySet<string>>;
  readonly lanes: MeeNonceLaneRepository;
  /** EntryPoint v0.7 `getNonce(sender, key)` on a served chain; throws ChainNotServedError for another. */
  readonly readNonce: (args: {
    readonly chainId: number;
    readonly sender: Address;
    readonly key: bigint;
  }) => Promise<bigint>;
  readonly readBalance: (args: {
    readonly chainId: number;
    readonly token: Address;
    readonly holder: Address;
  }) => Promise<bigint>;
  /** The tank owner's EIP-191 signature of the raw root, from the tank's signer back end. */
  readonly signRoot: (args: { readonly tank: SponsorTank; readonly root: Hex }) => Promise<Hex>;
  /** The tank's token and native prices on its chain, fresh, or undefined. */
  readonly prices: (args: { readonly chainId: number; readonly token: Address }) => TankPrices | undefined;
  /** What kind of account an op's sender is on its chain (unknown on a chain Patron does not serve). */
  readonly senderAccount: (args: {
    readonly chainId: number;
    readonly op: QuotedOp['userOp'];
  }) => Promise<SenderAccount>;
  readonly policies: PolicyGate;
  readonly entryPoint: Address;
  /** PATRON_MEE_NODES, lower-case. */
  readonly trustedNodes: ReadonlySet<string>;
  readonly now: () => number;
  /**
   * Whether settlement follows the tank on its chain yet (its cursor exists): a payment signed before its follower's
   * first round could be included unseen, and its reservation released as expired, outside the dApp's caps.
   */
  readonly tankFollowed: (tank: SponsorTank) => Promise<boolean>;
}

export interface SponsorCaller {
  readonly dappId: string;
  /** The dApp's verified sponsorship token (the MEE endpoints require one). */
  readonly grant: SponsorshipGrant;
}

/**
 * The sponsor side of Biconomy MEE for Patron's gas tanks (docs/guides/mee-sponsorship.md): nonce lanes from the
 * store, and a signature over a quote's root only after checkMeeQuote, the dApp's policies, the sponsorship token and
 * the reservation in the spend ledger all passed.
 */
export function createMeeSponsorService(deps: MeeSponsorDeps) {
  const tankFor = async (
    caller: { dappId: string },
    chainId: number,
    address: Address,
  ): Promise<SponsorTank & { meeVersion: MeeVersion }> => {
    const tank = await deps.findTank({ chainId, address });
    // Another dApp's tank is answered as unknown: its existence is not this caller's to learn.
    if (tank === undefined || tank.dappId !== caller.dappId) {
      throw new NotFoundError(`No gas tank ${address} on chain ${chainId} for this dApp`);
    }
    if (tank.status !== 'active') throw new ValidationError(`Gas tank ${address} is retired`);
    if (!isMeeVersion(tank.meeVersion)) throw new ValidationError(`Gas tank ${address} has an unknown MEE version`);
    return { ...tank, meeVersion: tank.meeVersion };
  };

  const nowSeconds = () => Math.floor(deps.now() / 1000);

  /** Every user op through the dApp's rules (each op's own calls, sender and chain), and the token's bounds. */
  const checkUserOps = async (
    caller: SponsorCaller,
    tank: SponsorTank,
    ops: readonly QuotedOp[],
  ): Promise<PolicyPass> => {
    if (ops.length === 0) throw new MeeQuoteRefusedError('malformed_quote', 'the quote has no user op to sponsor');
    let first: PolicyPass | undefined;
    for (const op of ops) {
      const claimed = caller.grant.claims.sender;
      if (claimed !== undefined && !isAddressEqual(claimed, op.userOp.sender)) {
        throw new MeeQuoteRefusedError(
          'malformed_quote',
          `the sponsorship token is bound to ${claimed}, not ${op.userOp.sender}`,
        );
      }
      const request: PolicyRequest = {
        dappId: caller.dappId,
        // A policy applies to a quote by the tank's chain (where the dApp's money is spent); its rules read each op.
        chainId: tank.chainId,
        sender: op.userOp.sender,
        user: caller.grant.claims.sub,
        userAddress: caller.grant.claims.addr,
        initCode: op.userOp.initCode ?? '0x',
        callData: op.userOp.callData,
        maxFeePerGas: op.userOp.maxFeePerGas,
        requestedPolicyId: undefined,
        senderAccount: () => deps.senderAccount({ chainId: op.chainId, op: op.userOp }),
      };
      await assertTokenCalls({ grant: caller.grant, request });
      const pass = await deps.policies.check(request);
      first ??= pass;
    }
    if (first === undefined) throw new MeeQuoteRefusedError('malformed_quote', 'the quote has no user op to sponsor');
    return first;
  };

  return {
    /** `GET sponsorship/nonce/{chainId}/{tank}`: a fresh lane's nonce for the tank (abstractjs reads `nonce`). */
    async nonce(args: { readonly dappId: string; readonly chainId: number; readonly tank: Address }) {
      const tank = await tankFor(args, args.chainId, args.tank);
      const lane = await deps.lanes.allocate({ tankId: tank.id, dappId: args.dappId, now: deps.now() });
      const key = meeNonceKey({ lane, validator: MEE_VERSIONS[tank.meeVersion].validator });
      const nonce = await deps.readNonce({ chainId: tank.chainId, sender: tank.address, key });
      if (nonce >> 64n !== key) throw new Error(`EntryPoint getNonce answered a nonce of another key for lane ${lane}`);
      await deps.lanes.recordNonce({ tankId: tank.id, lane, nonce });
      return { nonceKey: key.toString(), nonce: nonce.toString() };
    },

    /**
     * `POST sponsorship/sign/{chainId}/{tank}`: the quote checked whole, its payment priced and run through the
     * dApp's policies, its lane claimed, the root signed and the payment reserved before the signature is returned.
     * Answers the posted quote itself with `userOps[0].userOp.signature` written.
     */
    async sign(args: {
      readonly caller: SponsorCaller;
      readonly chainId: number;
      readonly tank: Address;
      readonly body: unknown;
    }) {
      const { caller } = args;
      const tank = await tankFor(caller, args.chainId, args.tank);
      if (!(await deps.tankFollowed(tank))) {
        throw new MeeQuoteRefusedError(
          'tank_not_ready',
          `gas tank ${tank.address} is not followed by settlement yet: retry in a few seconds`,
        );
      }
      const parsed = meeQuoteSchema.safeParse(args.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new MeeQuoteRefusedError(
          'malformed_quote',
          `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
        );
      }
      const quote: MeeQuote = parsed.data;
      const checked = checkMeeQuote({
        quote,
        tank,
        tankAddresses: await deps.tankAddresses(),
        trustedNodes: deps.trustedNodes,
        entryPoint: deps.entryPoint,
        nowSeconds: nowSeconds(),
      });
      const prices = deps.prices({ chainId: tank.chainId, token: tank.token });
      if (prices === undefined) {
        throw new ChainNotServedError(`No fresh USD price for the tank's token ${tank.token} on chain ${tank.chainId}`);
      }
      // The payment in USD (18 decimals) and as the native wei it is worth: the policies' caps count either unit.
      const usdE18 = (checked.amount * prices.tokenUsdE18) / 10n ** BigInt(tank.tokenDecimals);
      const worstCaseWei = ceilDiv(usdE18 * 10n ** 18n, prices.nativeUsdE18);
      const pass = await checkUserOps(caller, tank, checked.userOps);
      const payment = checked.paymentOp;
      const claimed = await deps.lanes.claim({
        tankId: tank.id,
        lane: checked.lane,
        dappId: caller.dappId,
        nonce: payment.userOp.nonce,
        allocatedAfter: deps.now() - MEE_LANE_TTL_MS,
        now: deps.now(),
      });
      if (!claimed) {
        throw new MeeQuoteRefusedError(
          'nonce_used',
          `the payment op's nonce (lane ${checked.lane}) was not handed to this dApp for this quote, was signed already, or is older than ${MEE_LANE_TTL_MS / 60_000} minutes: ask for a new quote`,
        );
      }
      const ownerSignature = await deps.signRoot({ tank, root: checked.root });
      const signature = meeSponsorSignature({
        root: checked.root,
        lower: payment.lowerBoundTimestamp,
        upper: payment.upperBoundTimestamp,
        proof: checked.proof,
        ownerSignature,
      });
      const fingerprint = signatureFingerprint(Buffer.from(ownerSignature.slice(2), 'hex'));
      const key = opKey({
        chainId: tank.chainId,
        entryPoint: deps.entryPoint,
        sender: tank.address,
        nonce: payment.userOp.nonce,
      });
      const decision = await deps.policies.reserve({
        pass,
        worstCaseWei,
        signed: {
          userOpHash: () => checked.paymentHash,
          opKey: () => key,
          signature: fingerprint,
        },
        validUntil: payment.upperBoundTimestamp,
        window: { unit: 'seconds', until: payment.upperBoundTimestamp },
        paymaster: tank.address,
        kind: 'mee',
        grant: caller.grant,
      });
      const facts: RequestFact[] = [
        { kind: 'op', mode: 'SPONSORED', sender: tank.address },
        { kind: 'policy', decision },
        {
          kind: 'signed',
          mode: 'SPONSORED',
          paymasterAndData: '0x',
          ...issuedSignature({
            chain: { chainId: tank.chainId, paymaster: tank.address, entryPoint: deps.entryPoint },
            worstCaseWei,
            validUntil: payment.upperBoundTimestamp,
            window: { unit: 'seconds', until: payment.upperBoundTimestamp },
            sender: tank.address,
            nonce: payment.userOp.nonce,
            hash: () => checked.paymentHash,
            opKey: () => key,
            signature: fingerprint,
          }),
        },
      ];
      return { quote: withSignature(args.body, signature), decision, checked, usdE18, facts };
    },

    /** `GET sponsorship/info`: the dApp's active tanks by chain, each with its token balance. */
    async info(args: { readonly dappId: string }) {
      const tanks = (await deps.tanksOf(args.dappId)).filter((t) => t.status === 'active');
      const out: Record<
        string,
        { chainId: string; token: { address: Address; balance: string; decimals: number }; gasTankAddress: Address }[]
      > = {};
      const rows = await Promise.all(
        tanks.map(async (t) => ({
          t,
          balance: await deps
            .readBalance({ chainId: t.chainId, token: t.token, holder: t.address })
            .catch(() => undefined),
        })),
      );
      for (const { t, balance } of rows) {
        const key = String(t.chainId);
        const list = out[key] ?? [];
        out[key] = list;
        list.push({
          chainId: String(t.chainId),
          token: {
            address: getAddress(t.token),
            balance: balance === undefined ? '' : balance.toString(),
            decimals: t.tokenDecimals,
          },
          gasTankAddress: getAddress(t.address),
        });
      }
      return out;
    },
  };
}

export type MeeSponsorService = ReturnType<typeof createMeeSponsorService>;

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** The posted quote, unchanged but for the payment op's signature (fields Patron does not parse pass through). */
function withSignature(body: unknown, signature: Hex): unknown {
  const quote = body as { userOps: { userOp: Record<string, unknown> }[] };
  const [payment, ...rest] = quote.userOps;
  if (payment === undefined) return body;
  return { ...quote, userOps: [{ ...payment, userOp: { ...payment.userOp, signature } }, ...rest] };
}
