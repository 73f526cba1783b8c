import { type Address, domainSeparator, getContractAddress, type Hex, isAddressEqual, parseAbi, zeroHash } from 'viem';
import {
  entryPoint06Address,
  entryPoint07Address,
  entryPoint08Address,
  entryPoint09Address,
} from 'viem/account-abstraction';
import { type AccountAbstractionArtifactVersion, loadAccountAbstractionArtifact } from './aaArtifacts.js';
import { loadAccountAbstractionV06Artifact } from './artifacts.js';
import type { EntryPointVersion } from './chainRegistry.js';
import {
  addressWord,
  codeAt,
  DETERMINISTIC_DEPLOYER,
  deployDeterministic,
  replaceWord,
} from './deterministicDeployer.js';
import { type DevClient, hasCode } from './devClient.js';

// One definition of the versions, in the chain registry (a chain's deployments are typed by it); re-exported here
// for the deployment code that found it here first.
export type { EntryPointVersion };

/** The releases that share the packed user operation and EntryPointSimulations. */
export type EntryPointV07Version = Exclude<EntryPointVersion, '0.6'>;

export const ENTRY_POINT_VERSIONS: readonly EntryPointVersion[] = ['0.6', '0.7', '0.8', '0.9'];

/** Where every SDK looks for each EntryPoint (viem's constants, so the two can never disagree). */
export const ENTRY_POINT_ADDRESSES: Readonly<Record<EntryPointVersion, Address>> = {
  '0.6': entryPoint06Address,
  '0.7': entryPoint07Address,
  '0.8': entryPoint08Address,
  '0.9': entryPoint09Address,
};

// Re-exported for callers that found them here first.
export { DETERMINISTIC_DEPLOYER, deployDeterministic };

/** The salts of the canonical deployments; each was checked to reproduce viem's address from the npm initcode. */
const CANONICAL_SALTS: Readonly<Record<'0.6' | '0.7' | '0.8', Hex>> = {
  '0.6': zeroHash,
  '0.7': '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3',
  '0.8': '0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9',
};

/** The EntryPoint's initcode of one version, from the npm package that matches it. */
function entryPointBytecode(version: EntryPointVersion): Hex {
  if (version === '0.6') return loadAccountAbstractionV06Artifact('EntryPoint').bytecode;
  return loadAccountAbstractionArtifact(version satisfies AccountAbstractionArtifactVersion, 'EntryPoint').bytecode;
}

/**
 * Deploys one EntryPoint at its canonical address so SDKs work unchanged; idempotent (a chain that has code
 * there is left alone). v0.6 to v0.8: CREATE2 with the published salt, byte-identical to mainnet. v0.9: see
 * installEntryPointV09.
 */
export async function deployEntryPoint(client: DevClient, version: EntryPointVersion): Promise<Address> {
  const canonical = ENTRY_POINT_ADDRESSES[version];
  if (await hasCode(client, canonical)) return canonical;
  const bytecode = entryPointBytecode(version);
  if (version === '0.9') return installEntryPointV09(client, bytecode);
  const what = `EntryPoint v${version}`;
  return deployDeterministic(client, { salt: CANONICAL_SALTS[version], bytecode, what, expected: canonical });
}

/** Kept for the callers that predate deployEntryPoint. */
export function deployEntryPointV06(client: DevClient): Promise<Address> {
  return deployEntryPoint(client, '0.6');
}

const senderCreatorAbi = parseAbi(['function entryPoint() view returns (address)']);
const entryPointV09Abi = parseAbi([
  'function senderCreator() view returns (address)',
  'function getDomainSeparatorV4() view returns (bytes32)',
]);

/**
 * EntryPoint v0.9 at 0x4337…D009. The only npm build is 0.9.0-rc.1, and the canonical address was made from
 * the final release's initcode, which differs, so no salt reproduces it. The contract is therefore built by
 * its real constructor at a staging address (CREATE2, salt 0, so the staging address is fixed) and its runtime
 * code moved to the canonical address with hardhat_setCode. The constructor writes no storage (v0.9's
 * reentrancy guard is tx.origin based), so the code is all there is to move; but it leaves immutables that name
 * the staging deployment, found by value in the deployed code (npm artifacts carry no immutableReferences):
 * - the EntryPoint's `_senderCreator`: the SenderCreator its constructor made (at staging nonce 1);
 * - OpenZeppelin EIP712's `_cachedThis` and `_cachedDomainSeparator` (keyed to the staging address; left as
 *   they are, EIP712 would recompute the separator on every call, but the cache should be right);
 * - the SenderCreator's `entryPoint`, which it requires to be msg.sender of createSender.
 * The SenderCreator goes where the canonical EntryPoint's own constructor would have put it (its nonce-1
 * CREATE address, which is also where EntryPointSimulations looks for it, having no immutables when put at
 * the EntryPoint's address by a state override), patched to name the canonical EntryPoint, and the
 * EntryPoint is patched to name it; both
 * staging copies are then removed so nothing can reach the unpatched pair.
 */
async function installEntryPointV09(client: DevClient, bytecode: Hex): Promise<Address> {
  const canonical = ENTRY_POINT_ADDRESSES['0.9'];
  const staging = await deployDeterministic(client, { salt: zeroHash, bytecode, what: 'EntryPoint v0.9 (staging)' });
  const stagingSenderCreator = await client.readContract({
    address: staging,
    abi: entryPointV09Abi,
    functionName: 'senderCreator',
  });
  const canonicalSenderCreator = getContractAddress({ from: canonical, nonce: 1n });
  const chainId = await client.getChainId();
  const separator = (verifyingContract: Address) =>
    domainSeparator({ domain: { name: 'ERC4337', version: '1', chainId, verifyingContract } }).slice(2);

  let entryPointCode = await codeAt(client, staging);
  entryPointCode = replaceWord(
    entryPointCode,
    addressWord(stagingSenderCreator),
    addressWord(canonicalSenderCreator),
    'EntryPoint v0.9 _senderCreator',
  );
  entryPointCode = replaceWord(entryPointCode, addressWord(staging), addressWord(canonical), 'EIP712 _cachedThis');
  entryPointCode = replaceWord(
    entryPointCode,
    separator(staging),
    separator(canonical),
    'EIP712 _cachedDomainSeparator',
  );
  const senderCreatorCode = replaceWord(
    await codeAt(client, stagingSenderCreator),
    addressWord(staging),
    addressWord(canonical),
    'SenderCreator entryPoint',
  );
  await client.setCode({ address: canonicalSenderCreator, bytecode: senderCreatorCode });
  await client.setCode({ address: canonical, bytecode: entryPointCode });
  await client.setCode({ address: staging, bytecode: '0x' });
  await client.setCode({ address: stagingSenderCreator, bytecode: '0x' });

  // Read back through the contracts themselves, so a patch that missed a copy fails here, not in a user's op.
  const [named, entryPointOfCreator] = await Promise.all([
    client.readContract({ address: canonical, abi: entryPointV09Abi, functionName: 'senderCreator' }),
    client.readContract({ address: canonicalSenderCreator, abi: senderCreatorAbi, functionName: 'entryPoint' }),
  ]);
  if (!isAddressEqual(named, canonicalSenderCreator) || !isAddressEqual(entryPointOfCreator, canonical)) {
    throw new Error('EntryPoint v0.9 and its SenderCreator do not name each other after the move');
  }
  return canonical;
}
