import { type Address, getAddress, type Hex, pad, parseAbi } from 'viem';
import { type ImmutableReferences, loadBiconomySmartAccountV2Artifact } from './artifacts.js';
import { type DevClient, hasCode, waitForSuccess } from './devClient.js';

/**
 * Biconomy Smart Account v2 on the dev chain, where `@biconomy/account` 4.x looks for it without configuration
 * (its DEFAULT_BICONOMY_FACTORY_ADDRESS, DEFAULT_BICONOMY_IMPLEMENTATION_ADDRESS, DEFAULT_FALLBACK_HANDLER_ADDRESS
 * and DEFAULT_ECDSA_OWNERSHIP_MODULE), so that `createSmartAccountClient({ paymasterUrl })` works against the
 * dev chain unmodified. The code is Biconomy's own (npm @biconomy-devx/account-contracts-v2, compiled by
 * scripts/build-contracts.mjs); each contract is deployed once by its real constructor and its runtime code then
 * moved to the canonical address (hardhat_setCode), since those addresses came from Biconomy's own deployer.
 */
export const BICONOMY_SMART_ACCOUNT_V2 = {
  factory: '0x000000a56Aaca3e9a4C479ea6b6CD0DbcB6634F5',
  implementation: '0x0000002512019Dafb59528B82CB92D3c5D2423aC',
  fallbackHandler: '0x0bBa6d96BD616BedC6BFaa341742FD43c60b83C1',
  ecdsaOwnershipModule: '0x0000001c5b32F37F5beA87BDD5374eB2aC54eA8e',
} as const satisfies Record<string, Address>;

/**
 * The CBOR metadata that ends the Proxy's creation code as Biconomy deployed it (IPFS hash of their build's
 * metadata, solc 0.8.17). The SDK derives every account address from that exact creation code
 * (PROXY_CREATION_CODE), and the factory deploys its embedded copy with CREATE2, so the two must be equal byte
 * for byte. Our compile of the same Proxy.sol with the same settings yields the same code but another
 * metadata hash (it covers their build's file paths and settings), so the factory gets theirs spliced in;
 * test/e2e.biconomySmartAccountV2.test.ts checks the result equals the SDK's constant.
 */
const PUBLISHED_PROXY_METADATA =
  'a2646970667358221220a03b18dce0be0b4c9afe58a9eb85c35205e2cf087da098bbf1d23945bf89496064736f6c63430008110033';

const factoryAbi = parseAbi([
  'constructor(address _basicImplementation, address _newOwner)',
  'function minimalHandler() view returns (address)',
  'function accountCreationCode() pure returns (bytes)',
]);
const implementationAbi = parseAbi(['constructor(address anEntryPoint)']);

/**
 * Installs the set (idempotent: a chain that has any of the four already is left alone, since the set is placed
 * with hardhat_setCode and a fork's real contracts must never be overwritten; docs/guides/fork-mode.md).
 */
export async function installBiconomySmartAccountV2(params: {
  readonly client: DevClient;
  readonly entryPoint: Address;
}): Promise<void> {
  const { client, entryPoint } = params;
  const canonical = BICONOMY_SMART_ACCOUNT_V2;
  for (const address of Object.values(canonical)) if (await hasCode(client, address)) return;

  const implementation = loadBiconomySmartAccountV2Artifact('SmartAccount');
  const deployedImplementation = await deploy(client, {
    bytecode: implementation.bytecode,
    abi: implementationAbi,
    args: [entryPoint],
  });
  // The implementation keeps its own address (SELF) to refuse direct calls; it must be the canonical one.
  await client.setCode({
    address: canonical.implementation,
    bytecode: rehome(await codeAt(client, deployedImplementation), implementation.immutableReferences, {
      [deployedImplementation]: canonical.implementation,
    }),
  });

  // Neither has a constructor or immutables: their runtime code is placed as compiled.
  for (const [name, address] of [
    ['EcdsaOwnershipRegistryModule', canonical.ecdsaOwnershipModule],
    ['DefaultCallbackHandler', canonical.fallbackHandler],
  ] as const) {
    await client.setCode({ address, bytecode: loadBiconomySmartAccountV2Artifact(name).deployedBytecode });
  }

  const factory = loadBiconomySmartAccountV2Artifact('SmartAccountFactory');
  const deployedFactory = await deploy(client, {
    bytecode: factory.bytecode,
    abi: factoryAbi,
    args: [canonical.implementation, client.account.address],
  });
  // Its constructor creates the fallback handler (immutable minimalHandler), which every account's salt covers.
  const createdHandler = await client.readContract({
    address: deployedFactory,
    abi: factoryAbi,
    functionName: 'minimalHandler',
  });
  const rehomed = rehome(await codeAt(client, deployedFactory), factory.immutableReferences, {
    [createdHandler]: canonical.fallbackHandler,
  });
  await client.setCode({ address: canonical.factory, bytecode: withPublishedProxy(rehomed) });
}

/** The factory's runtime code with every embedded Proxy creation code ending in Biconomy's published metadata. */
function withPublishedProxy(factoryCode: Hex): Hex {
  const proxy = loadBiconomySmartAccountV2Artifact('Proxy').bytecode.slice(2).toLowerCase();
  const ours = proxy.slice(-PUBLISHED_PROXY_METADATA.length);
  const body = proxy.slice(0, -PUBLISHED_PROXY_METADATA.length);
  if (!ours.startsWith('a264697066735822') || !ours.endsWith('64736f6c63430008110033')) {
    throw new Error('the compiled Proxy does not end in solc 0.8.17 IPFS metadata: wrong compiler or settings?');
  }
  const code = factoryCode.slice(2).toLowerCase();
  const parts = code.split(proxy);
  if (parts.length < 2) throw new Error('the compiled factory does not embed the compiled Proxy creation code');
  return `0x${parts.join(body + PUBLISHED_PROXY_METADATA)}`;
}

/**
 * Runtime code whose immutables held a deployment address (its own, or one its constructor created) made to
 * hold the canonical address instead, at exactly the positions solc reported for immutables.
 */
function rehome(code: Hex, refs: ImmutableReferences, renames: Readonly<Record<Address, Address>>): Hex {
  let hex = code.slice(2).toLowerCase();
  const wanted = new Map(
    Object.entries(renames).map(([from, to]) => [
      pad(getAddress(from as Address))
        .slice(2)
        .toLowerCase(),
      to,
    ]),
  );
  let replaced = 0;
  for (const { start, length } of Object.values(refs).flat()) {
    const at = start * 2;
    const word = hex.slice(at, at + length * 2);
    const to = wanted.get(word);
    if (to === undefined) continue;
    hex = hex.slice(0, at) + pad(to).slice(2).toLowerCase() + hex.slice(at + length * 2);
    replaced += 1;
  }
  if (replaced === 0) throw new Error('no immutable held the address to move: the compiled code changed shape');
  return `0x${hex}`;
}

async function deploy(client: DevClient, params: Parameters<DevClient['deployContract']>[0]): Promise<Address> {
  const hash = await client.deployContract(params);
  const receipt = await waitForSuccess(client, hash, 'Biconomy Smart Account v2 deployment');
  if (receipt.contractAddress == null)
    throw new Error(`Biconomy Smart Account v2 deployment left no address (tx ${hash})`);
  return getAddress(receipt.contractAddress);
}

async function codeAt(client: DevClient, address: Address): Promise<Hex> {
  const code = await client.getCode({ address });
  if (code === undefined || code === '0x') throw new Error(`no code at ${address} after its deployment`);
  return code;
}
