import { type Address, type Hex, isAddressEqual, parseAbi } from 'viem';
import type { ChainRegistry } from '../chain/chainRegistry.js';
import { ENTRY_POINT_ADDRESSES } from '../chain/entryPoints.js';
import type { ChainReads } from '../chain/senderCode.js';
import { ChainNotServedError } from '../errors/PatronError.js';
import { knownAccountsOf, resolveSenderAccount, type SenderAccount } from '../policies/knownAccounts.js';
import type { PolicyGate } from '../policies/policyGate.js';
import type { ChainCursorRepository } from '../store/ledger/chainCursorRepository.js';
import type { MeeNonceLaneRepository } from '../store/tenants/meeNonceLaneRepository.js';
import type { TokenCatalog } from '../tokens/tokenCatalog.js';
import { createMeeSponsorService, type MeeSponsorService, type SponsorTank } from './meeSponsorService.js';
import { readTankBalance } from './tankChainReads.js';

const GET_NONCE = parseAbi(['function getNonce(address sender, uint192 key) view returns (uint256)']);

/** Where the sponsor service finds the tanks (store.meeTanks). */
export interface TankSource {
  findByAddress(args: { readonly chainId: number; readonly address: Address }): Promise<SponsorTank | undefined>;
  listForDapp(dappId: string): Promise<readonly SponsorTank[]>;
  allAddresses(): Promise<ReadonlySet<string>>;
}

/** The MEE sponsor service as deps.ts builds it: the store's tanks and lanes, the served chains, the token prices. */
export function buildMeeSponsor(args: {
  readonly tanks: TankSource;
  readonly lanes: MeeNonceLaneRepository;
  readonly chains: ChainRegistry;
  readonly chainReads: ChainReads;
  readonly tokenCatalog: TokenCatalog;
  readonly policies: PolicyGate;
  readonly signRoot: (args: { readonly tank: SponsorTank; readonly root: Hex }) => Promise<Hex>;
  readonly trustedNodes: readonly Address[];
  readonly now: () => number;
  /** Settlement's cursors: a tank is signed for only once its follower has read its chain (store.chainCursors). */
  readonly cursors: Pick<ChainCursorRepository, 'get'>;
}): MeeSponsorService {
  const served = (chainId: number) => {
    const chain = args.chains.get(chainId);
    if (chain === undefined) throw new ChainNotServedError(`Chain ${chainId} is not configured on this Patron`);
    return chain;
  };
  const entryPoint = ENTRY_POINT_ADDRESSES['0.7'];
  return createMeeSponsorService({
    findTank: (a) => args.tanks.findByAddress(a),
    tanksOf: (dappId) => args.tanks.listForDapp(dappId),
    tankAddresses: () => args.tanks.allAddresses(),
    lanes: args.lanes,
    readNonce: ({ chainId, sender, key }) =>
      served(chainId).client.readContract({
        address: entryPoint,
        abi: GET_NONCE,
        functionName: 'getNonce',
        args: [sender, key],
      }),
    readBalance: ({ chainId, token, holder }) => readTankBalance({ client: served(chainId).client, token, holder }),
    signRoot: args.signRoot,
    prices: ({ chainId, token }) => {
      const snap = args.tokenCatalog.snapshot(chainId);
      const t = snap?.tokens.find((x) => isAddressEqual(x.address, token));
      if (snap?.nativeUsdE18 === undefined || t === undefined) return undefined;
      return { tokenUsdE18: t.tokenUsdE18, nativeUsdE18: snap.nativeUsdE18 };
    },
    senderAccount: async ({ chainId, op }): Promise<SenderAccount> => {
      const chain = args.chains.get(chainId);
      if (chain === undefined) {
        return {
          known: false,
          found: { reason: `chain ${chainId} is not served by this Patron, so the sender is not read` },
        };
      }
      return resolveSenderAccount({
        chain,
        reads: args.chainReads,
        known: knownAccountsOf(chain),
        op: { sender: op.sender, initCode: op.initCode ?? '0x' },
      });
    },
    policies: args.policies,
    entryPoint,
    trustedNodes: new Set(args.trustedNodes.map((a) => a.toLowerCase())),
    now: args.now,
    tankFollowed: async (tank) =>
      (await args.cursors.get({ chainId: tank.chainId, entryPoint, paymaster: tank.address, follows: 'sender' })) !==
      undefined,
  });
}
