import { type Address, concat, encodeAbiParameters, zeroHash } from 'viem';
import { loadAccountAbstractionArtifact } from './aaArtifacts.js';
import { loadAccountAbstractionV06Artifact } from './artifacts.js';
import { codeAt, deployDeterministic } from './deterministicDeployer.js';
import { type DevClient, hasCode } from './devClient.js';
import { ENTRY_POINT_ADDRESSES } from './entryPoints.js';

/**
 * eth-infinitism's sample accounts where today's SDKs look for them without configuration:
 * - SimpleAccountFactory v0.6, v0.7 and v0.8: permissionless 0.4.1 `toSimpleSmartAccount` (its getFactoryAddress);
 * - Simple7702Account v0.8: viem's `toSimple7702SmartAccount` and permissionless `to7702SimpleSmartAccount`;
 * - Simple7702Account v0.9: viem's `toSimple7702SmartAccount({ entryPoint: '0.9' })`.
 * The first four are the npm initcode (0.6.0 / 0.7.0 / 0.8.0) through Arachnid's deployer with salt 0, which lands on
 * the published address byte for byte, so no code is patched. The v0.9 one cannot be reproduced from
 * 0.9.0-rc.1 (the address came from the final release's code): see installSimple7702AccountV09.
 */
export const SIMPLE_ACCOUNT_ADDRESSES = {
  factoryV06: '0x9406Cc6185a346906296840746125a0E44976454',
  factoryV07: '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985',
  factoryV08: '0x13E9ed32155810FDbd067D4522C492D6f68E5944',
  simple7702V08: '0xe6Cae83BdE06E4c305530e199D7217f42808555B',
  simple7702V09: '0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5',
} as const satisfies Record<string, Address>;

export type SimpleAccountAddresses = { readonly [K in keyof typeof SIMPLE_ACCOUNT_ADDRESSES]: Address };

const entryPointArg = (entryPoint: Address) => encodeAbiParameters([{ type: 'address' }], [entryPoint]);

/**
 * Installs the set; idempotent. Needs EntryPoint v0.7, v0.8 and v0.9 first: the v0.8 factory reads its
 * EntryPoint's senderCreator() in its constructor.
 */
export async function deploySimpleAccounts(client: DevClient): Promise<SimpleAccountAddresses> {
  const canonical = SIMPLE_ACCOUNT_ADDRESSES;
  await deployDeterministic(client, {
    salt: zeroHash,
    bytecode: concat([
      loadAccountAbstractionArtifact('0.7', 'SimpleAccountFactory').bytecode,
      entryPointArg(ENTRY_POINT_ADDRESSES['0.7']),
    ]),
    what: 'SimpleAccountFactory v0.7',
    expected: canonical.factoryV07,
  });
  await deployDeterministic(client, {
    salt: zeroHash,
    bytecode: concat([
      loadAccountAbstractionArtifact('0.8', 'SimpleAccountFactory').bytecode,
      entryPointArg(ENTRY_POINT_ADDRESSES['0.8']),
    ]),
    what: 'SimpleAccountFactory v0.8',
    expected: canonical.factoryV08,
  });
  // v0.8's Simple7702Account names its EntryPoint in code (a pure function), so it takes no arguments.
  await deployDeterministic(client, {
    salt: zeroHash,
    bytecode: loadAccountAbstractionArtifact('0.8', 'Simple7702Account').bytecode,
    what: 'Simple7702Account v0.8',
    expected: canonical.simple7702V08,
  });
  await installSimple7702AccountV09(client);
  return canonical;
}

/**
 * SimpleAccountFactory v0.6 at permissionless's default address. The dev chain's own v0.6 factory (embeddedChain.ts,
 * plain CREATE) stays what /api/chains reports. Installed last by the dev chain: a transaction before the tokens and
 * paymasters would move their CREATE addresses, which the docs and operators' settings name.
 */
export async function deploySimpleAccountFactoryV06(client: DevClient): Promise<Address> {
  return deployDeterministic(client, {
    salt: zeroHash,
    bytecode: concat([
      loadAccountAbstractionV06Artifact('SimpleAccountFactory').bytecode,
      entryPointArg(ENTRY_POINT_ADDRESSES['0.6']),
    ]),
    what: 'SimpleAccountFactory v0.6',
    expected: SIMPLE_ACCOUNT_ADDRESSES.factoryV06,
  });
}

/**
 * Simple7702Account 0.9.0-rc.1 takes its EntryPoint as a constructor argument (an immutable) and keeps no
 * other immutable and no storage from its constructor, so it is built once at a staging address (salt 0,
 * naming the canonical EntryPoint v0.9) and its runtime code moved unchanged to viem's default address.
 */
async function installSimple7702AccountV09(client: DevClient): Promise<void> {
  const canonical = SIMPLE_ACCOUNT_ADDRESSES.simple7702V09;
  if (await hasCode(client, canonical)) return;
  const staging = await deployDeterministic(client, {
    salt: zeroHash,
    bytecode: concat([
      loadAccountAbstractionArtifact('0.9', 'Simple7702Account').bytecode,
      entryPointArg(ENTRY_POINT_ADDRESSES['0.9']),
    ]),
    what: 'Simple7702Account v0.9 (staging)',
  });
  await client.setCode({ address: canonical, bytecode: await codeAt(client, staging) });
  await client.setCode({ address: staging, bytecode: '0x' });
}
