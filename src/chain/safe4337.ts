import { createRequire } from 'node:module';
import { type Address, concat, encodeAbiParameters, zeroHash } from 'viem';
import { type ContractArtifact, readContractArtifact } from './artifacts.js';
import {
  DETERMINISTIC_DEPLOYER,
  type DeterministicDeployment,
  deployDeterministic,
  SAFE_SINGLETON_FACTORY,
} from './deterministicDeployer.js';
import type { DevClient } from './devClient.js';
import { ENTRY_POINT_ADDRESSES } from './entryPoints.js';

/**
 * Safe 1.4.1 with its ERC-4337 module 0.3.0 (the EntryPoint v0.7 one) at the addresses permissionless 0.4.1
 * `toSafeSmartAccount({ version: '1.4.1', entryPoint: v0.7 })` defaults to. Every one is reproduced byte for
 * byte by CREATE2 with salt 0 from the npm artifacts, so no code is patched:
 * - Safe, SafeProxyFactory, MultiSend, MultiSendCallOnly: @safe-global/safe-contracts 1.4.1 through Safe's
 *   singleton factory, which is how Safe deploys its releases;
 * - Safe4337Module (constructor argument: EntryPoint v0.7) and SafeModuleSetup: @safe-global/safe-4337 0.3.0
 *   through Arachnid's deployer, which the module's own deployment scripts use.
 * The artifacts are read from node_modules at run time (the module is GPL-3.0, Safe LGPL-3.0).
 * The WebAuthn shared signer and P-256 verifier that permissionless also names are only used for passkey
 * owners, and are not installed.
 */
export const SAFE_4337_ADDRESSES = {
  singleton: '0x41675C099F32341bf84BFc5382aF534df5C7461a',
  proxyFactory: '0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67',
  multiSend: '0x38869bf66a61cF6bDB996A6aE40D5853Fd43B526',
  multiSendCallOnly: '0x9641d764fc13c8B624c04430C7356C1C7C8102e2',
  safeModuleSetup: '0x2dd68b007B46fBe91B9A7c3EDa5A7a1063cB5b47',
  safe4337Module: '0x75cf11467937ce3F2f357CE24ffc3DBF8fD5c226',
} as const satisfies Record<string, Address>;

export type Safe4337Addresses = { readonly [K in keyof typeof SAFE_4337_ADDRESSES]: Address };

function loadSafeArtifact(pkg: 'safe-contracts' | 'safe-4337', path: string): ContractArtifact {
  const require = createRequire(import.meta.url);
  const file = require.resolve(`@safe-global/${pkg}/build/artifacts/${path}`);
  const version = pkg === 'safe-contracts' ? '1.4.1' : '0.3.0';
  return readContractArtifact(file, `install @safe-global/${pkg}@${version}`);
}

/** Installs the set; idempotent. EntryPoint v0.7 must be deployed (the module names it, and is used with it). */
export async function deploySafe4337(client: DevClient): Promise<Safe4337Addresses> {
  const at = SAFE_4337_ADDRESSES;
  const safe = (path: string) => loadSafeArtifact('safe-contracts', `contracts/${path}`).bytecode;
  const module = (path: string) => loadSafeArtifact('safe-4337', `contracts/${path}`).bytecode;
  const deployments: Omit<DeterministicDeployment, 'salt'>[] = [
    { what: 'Safe 1.4.1 singleton', expected: at.singleton, bytecode: safe('Safe.sol/Safe.json') },
    {
      what: 'SafeProxyFactory 1.4.1',
      expected: at.proxyFactory,
      bytecode: safe('proxies/SafeProxyFactory.sol/SafeProxyFactory.json'),
    },
    { what: 'MultiSend 1.4.1', expected: at.multiSend, bytecode: safe('libraries/MultiSend.sol/MultiSend.json') },
    {
      what: 'MultiSendCallOnly 1.4.1',
      expected: at.multiSendCallOnly,
      bytecode: safe('libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json'),
    },
  ].map((d) => ({ ...d, deployer: SAFE_SINGLETON_FACTORY }));
  deployments.push(
    {
      what: 'SafeModuleSetup 0.3.0',
      expected: at.safeModuleSetup,
      bytecode: module('SafeModuleSetup.sol/SafeModuleSetup.json'),
      deployer: DETERMINISTIC_DEPLOYER,
    },
    {
      what: 'Safe4337Module 0.3.0',
      expected: at.safe4337Module,
      bytecode: concat([
        module('Safe4337Module.sol/Safe4337Module.json'),
        encodeAbiParameters([{ type: 'address' }], [ENTRY_POINT_ADDRESSES['0.7']]),
      ]),
      deployer: DETERMINISTIC_DEPLOYER,
    },
  );
  for (const d of deployments) await deployDeterministic(client, { ...d, salt: zeroHash });
  return at;
}
