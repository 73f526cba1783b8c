import { type Address, decodeFunctionData, getAddress, type Hex, hexToBytes, pad, parseAbi, size, slice } from 'viem';
import { CANONICAL_ACCOUNTS, GENERIC_FACTORIES } from '../chain/canonicalAccounts.js';
import type { ChainRuntime } from '../chain/chainRegistry.js';
import { isEip7702InitCode } from '../chain/eip7702InitCode.js';
import type { ChainReads } from '../chain/senderCode.js';
import {
  type AccountKind,
  type KnownAccountsSetting,
  type ProxySlot,
  proxySlotOf,
} from '../config/knownAccountsSettings.js';

/**
 * Which kind of smart account an op's sender is, so that a policy's contract allowlist decodes its callData with
 * the layouts that account really executes (docs/guides/policies.md, "How policies are enforced"). Patron knows an account by what
 * the chain shows, never by what the op says:
 * - deployed: its EIP-7702 delegate (code 0xef0100 ‖ delegate), its own code hash (an account without a proxy), or,
 *   for a proxy whose code Patron knows, the implementation the proxy runs (ERC-1967 slot; Safe's singleton in slot
 *   0 with Safe's 4337 module as fallback handler; Biconomy SA v2's slot numbered by the proxy's address): it must
 *   be one Patron knows for that kind. A known proxy is required: any contract can store a known address in a slot
 *   without delegating to it.
 * - not deployed, initCode present: its factory (initCode's first 20 bytes) must be known; a factory that takes the
 *   implementation as an argument (Safe's proxy factory, Kernel's) must be given a known one. On EntryPoint v0.9,
 *   which ignores initCode for a sender that has code by then, the sender must also be the address the factory
 *   deploys (EntryPoint.getSenderAddress): else any code put there after Patron signed would run.
 * - an EIP-7702 op (`eip7702Auth`, or the 0x7702 initCode marker): the delegate it installs or has.
 * Anything else is unknown, with what was found, which the denial shows.
 */
export type SenderAccount =
  | { readonly known: true; readonly kind: AccountKind }
  | { readonly known: false; readonly found: SenderFound };

/** What Patron found where it looked: the denial's data (`unknownAccount`), for the operator to act on. */
export interface SenderFound {
  readonly reason: string;
  readonly codeHash?: Hex;
  readonly implementation?: Address;
  readonly delegate?: Address;
  readonly factory?: Address;
}

/** A chain's known accounts as lookup tables (lower-case keys). */
export interface KnownAccounts {
  readonly implementations: ReadonlyMap<string, AccountKind>;
  readonly factories: ReadonlyMap<string, AccountKind>;
  readonly codeHashes: ReadonlyMap<string, AccountKind>;
  readonly proxies: ReadonlyMap<string, { readonly slot: ProxySlot; readonly kinds: ReadonlySet<AccountKind> }>;
  readonly safeModules: ReadonlySet<string>;
  /** The bootstraps a Nexus factory's data may name (either Nexus line's). */
  readonly nexusBootstraps: ReadonlySet<string>;
}

/** ERC-1967's implementation slot: keccak256("eip1967.proxy.implementation") - 1. */
export const ERC1967_IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
/** Safe's FallbackManager slot: keccak256("fallback_manager.handler.address"). */
export const SAFE_FALLBACK_HANDLER_SLOT: Hex = '0x6c9a6c4a39284e37ed1cf53d337577d14212a4870fb976a4366c693b939918d5';
const SLOT_0: Hex = pad('0x00');

/**
 * Merges settings in order (the canonical ones first, then a chain's): an address or code hash already given
 * another kind throws, naming it, so a misconfigured chain stops the start-up instead of decoding with the wrong
 * layouts.
 */
export function knownAccounts(settings: readonly KnownAccountsSetting[]): KnownAccounts {
  const implementations = new Map<string, AccountKind>();
  const factories = new Map<string, AccountKind>();
  const codeHashes = new Map<string, AccountKind>();
  const proxies = new Map<string, { slot: ProxySlot; kinds: Set<AccountKind> }>();
  const safeModules = new Set<string>();
  const nexusBootstraps = new Set<string>();
  const claim = (table: Map<string, AccountKind>, value: string, kind: AccountKind, what: string) => {
    const key = value.toLowerCase();
    const seen = table.get(key);
    if (seen !== undefined && seen !== kind) throw new Error(`accounts: ${what} ${value} is ${seen}'s, not ${kind}'s`);
    table.set(key, kind);
  };
  for (const setting of settings) {
    for (const [k, lists] of Object.entries(setting)) {
      const kind = k as AccountKind;
      for (const a of lists?.implementations ?? []) claim(implementations, a, kind, 'implementation');
      for (const a of lists?.factories ?? []) claim(factories, a, kind, 'factory');
      for (const h of lists?.codeHashes ?? []) claim(codeHashes, h, kind, 'code hash');
      for (const m of lists?.modules ?? []) safeModules.add(m.toLowerCase());
      for (const b of lists?.bootstraps ?? []) nexusBootstraps.add(b.toLowerCase());
      for (const h of lists?.proxyCodeHashes ?? []) {
        const key = h.toLowerCase();
        const slot = proxySlotOf(kind);
        const entry = proxies.get(key) ?? { slot, kinds: new Set<AccountKind>() };
        if (entry.slot !== slot)
          throw new Error(`accounts: proxy code hash ${h} cannot be ${kind}'s and another slot's`);
        entry.kinds.add(kind);
        proxies.set(key, entry);
      }
    }
  }
  for (const h of codeHashes.keys()) {
    if (proxies.has(h)) throw new Error(`accounts: code hash ${h} is listed as an account and as a proxy`);
  }
  return { implementations, factories, codeHashes, proxies, safeModules, nexusBootstraps };
}

/** Built once per chain's settings object (the chain registry's runtimes live as long as the process). */
const tables = new WeakMap<object, KnownAccounts>();
const CANONICAL_ONLY = knownAccounts([CANONICAL_ACCOUNTS]);

/** The canonical accounts plus the chain's own (`PATRON_CHAINS[i].accounts`, or what the dev chain deploys). */
export function knownAccountsOf(chain: Pick<ChainRuntime, 'accounts'>): KnownAccounts {
  if (chain.accounts === undefined) return CANONICAL_ONLY;
  let t = tables.get(chain.accounts);
  if (t === undefined) {
    t = knownAccounts([CANONICAL_ACCOUNTS, chain.accounts]);
    tables.set(chain.accounts, t);
  }
  return t;
}

const wordToAddress = (word: Hex): Address => getAddress(slice(pad(word, { size: 32 }), 12));
const unknown = (found: SenderFound): SenderAccount => ({ known: false, found });

/** The op fields the resolution reads. */
export interface SenderOp {
  readonly sender: Address;
  readonly initCode: Hex;
  readonly eip7702Auth?: { readonly address: Address } | undefined;
}

export async function resolveSenderAccount(args: {
  readonly chain: ChainRuntime;
  readonly reads: ChainReads;
  readonly known: KnownAccounts;
  readonly op: SenderOp;
}): Promise<SenderAccount> {
  const { chain, reads, known, op } = args;
  const byDelegate = (delegate: Address): SenderAccount => {
    const kind = known.implementations.get(delegate.toLowerCase());
    return kind === undefined
      ? unknown({ reason: 'an EIP-7702 delegate Patron does not know', delegate })
      : { known: true, kind };
  };
  if (op.eip7702Auth !== undefined) return byDelegate(getAddress(op.eip7702Auth.address));
  const code = await reads.code(chain, op.sender);
  if (code?.delegate !== undefined) return byDelegate(code.delegate);
  if (op.initCode.startsWith('0x7702') && isEip7702InitCode(hexToBytes(op.initCode))) {
    return unknown({ reason: 'the 0x7702 initCode for a sender that is not delegated with EIP-7702' });
  }
  if (code !== undefined) return byCode({ chain, reads, known, sender: op.sender, codeHash: code.codeHash });
  if (size(op.initCode) === 0) return unknown({ reason: 'the sender has no code and the op no initCode' });
  return byFactory({ chain, reads, known, op });
}

async function byCode(args: {
  readonly chain: ChainRuntime;
  readonly reads: ChainReads;
  readonly known: KnownAccounts;
  readonly sender: Address;
  readonly codeHash: Hex;
}): Promise<SenderAccount> {
  const { chain, reads, known, sender, codeHash } = args;
  const own = known.codeHashes.get(codeHash.toLowerCase());
  if (own !== undefined) return { known: true, kind: own };
  const proxy = known.proxies.get(codeHash.toLowerCase());
  if (proxy === undefined) return unknown({ reason: 'account code Patron does not know', codeHash });
  const slot = proxy.slot === 'erc1967' ? ERC1967_IMPLEMENTATION_SLOT : proxy.slot === 'safe' ? SLOT_0 : pad(sender);
  const implementation = wordToAddress(await reads.storage(chain, sender, slot));
  const kind = known.implementations.get(implementation.toLowerCase());
  if (kind === undefined || !proxy.kinds.has(kind)) {
    return unknown({ reason: 'a proxy whose implementation Patron does not know', codeHash, implementation });
  }
  if (kind === 'safe4337') {
    // A Safe runs validateUserOp and executeUserOp in its fallback handler: that, not the singleton, is the 4337 code.
    const handler = wordToAddress(await reads.storage(chain, sender, SAFE_FALLBACK_HANDLER_SLOT));
    if (!known.safeModules.has(handler.toLowerCase())) {
      return unknown({
        reason: 'a Safe whose fallback handler is not a 4337 module Patron knows',
        codeHash,
        implementation: handler,
      });
    }
  }
  return { known: true, kind };
}

const SAFE_PROXY_FACTORY = parseAbi([
  'function createProxyWithNonce(address singleton, bytes initializer, uint256 saltNonce)',
]);
const SAFE_SETUP = parseAbi([
  'function setup(address[] owners, uint256 threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)',
]);
const KERNEL_V2_FACTORY = parseAbi(['function createAccount(address implementation, bytes data, uint256 index)']);
const KERNEL_META_FACTORY = parseAbi(['function deployWithFactory(address factory, bytes createData, bytes32 salt)']);
const NEXUS_FACTORY = parseAbi(['function createAccount(bytes initData, bytes32 salt)']);

/**
 * A Nexus factory's account delegatecalls the bootstrap that the first word of its initData names (Nexus
 * `_initializeAccount` reads it with calldataload, so its low 20 bytes), which must be a known one: any other
 * could write any implementation into the proxy's slot before the first call.
 */
function nexusBootstrap(known: KnownAccounts, data: Hex): Omit<SenderFound, 'factory'> | undefined {
  const [initData] = decodeFunctionData({ abi: NEXUS_FACTORY, data }).args;
  if (size(initData) < 32) return { reason: 'Nexus factory data Patron cannot read' };
  const bootstrap = getAddress(slice(initData, 12, 32));
  return known.nexusBootstraps.has(bootstrap.toLowerCase())
    ? undefined
    : { reason: 'a Nexus bootstrap Patron does not know', implementation: bootstrap };
}

async function byFactory(args: {
  readonly chain: ChainRuntime;
  readonly reads: ChainReads;
  readonly known: KnownAccounts;
  readonly op: SenderOp;
}): Promise<SenderAccount> {
  const { chain, reads, known, op } = args;
  if (size(op.initCode) < 20) return unknown({ reason: 'an initCode shorter than a factory address' });
  const factory = getAddress(slice(op.initCode, 0, 20));
  const kind = known.factories.get(factory.toLowerCase());
  if (kind === undefined) return unknown({ reason: 'a factory Patron does not know', factory });
  const implementation =
    kind === 'nexusV12' || kind === 'nexusV13'
      ? readFactoryData(() => nexusBootstrap(known, slice(op.initCode, 20)))
      : implementationArgument(known, factory, slice(op.initCode, 20));
  if (implementation !== undefined) return unknown({ ...implementation, factory });
  // v0.9 runs the code the sender has at inclusion, whatever its initCode says, once it has any.
  if (chain.entryPointVersion === '0.9') {
    const deployed = await reads.senderOfInitCode(chain, op.initCode);
    if (deployed === undefined || deployed.toLowerCase() !== op.sender.toLowerCase()) {
      return unknown({ reason: 'a sender that is not the address its initCode deploys', factory });
    }
  }
  return { known: true, kind };
}

const readFactoryData = (
  read: () => Omit<SenderFound, 'factory'> | undefined,
): Omit<SenderFound, 'factory'> | undefined => {
  try {
    return read();
  } catch {
    return { reason: 'factory data Patron cannot read' };
  }
};

/**
 * For a factory that deploys whatever implementation its data names, why that implementation is not a known one
 * (undefined: it is, or the factory fixes its own).
 */
function implementationArgument(
  known: KnownAccounts,
  factory: Address,
  data: Hex,
): Omit<SenderFound, 'factory'> | undefined {
  const f = factory.toLowerCase();
  const isKnown = (a: Address, kind: AccountKind) => known.implementations.get(a.toLowerCase()) === kind;
  try {
    if (f === GENERIC_FACTORIES.safeProxyFactory.toLowerCase()) {
      const [singleton, initializer] = decodeFunctionData({ abi: SAFE_PROXY_FACTORY, data }).args;
      if (!isKnown(singleton, 'safe4337'))
        return { reason: 'a Safe singleton Patron does not know', implementation: singleton };
      const setup = decodeFunctionData({ abi: SAFE_SETUP, data: initializer }).args;
      const handler = setup[4];
      if (!known.safeModules.has(handler.toLowerCase())) {
        return { reason: 'a Safe whose fallback handler is not a 4337 module Patron knows', implementation: handler };
      }
      return undefined;
    }
    if (f === GENERIC_FACTORIES.kernelV2Factory.toLowerCase()) {
      const [implementation] = decodeFunctionData({ abi: KERNEL_V2_FACTORY, data }).args;
      return isKnown(implementation, 'kernelV2')
        ? undefined
        : { reason: 'a Kernel implementation Patron does not know', implementation };
    }
    if (f === GENERIC_FACTORIES.kernelV3MetaFactory.toLowerCase()) {
      const [inner] = decodeFunctionData({ abi: KERNEL_META_FACTORY, data }).args;
      const innerKind = known.factories.get(inner.toLowerCase());
      return innerKind === 'kernelV3' && inner.toLowerCase() !== f
        ? undefined
        : { reason: 'a Kernel factory Patron does not know', implementation: inner };
    }
  } catch {
    return { reason: 'factory data Patron cannot read' };
  }
  return undefined;
}
