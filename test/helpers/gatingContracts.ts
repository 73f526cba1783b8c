import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type Abi, type Address, getAddress, type Hex, parseAbi } from 'viem';
import { type DevClient, waitForSuccess } from '../../src/chain/devClient.js';

/**
 * The real contracts the gating rules read (docs/guides/policies.md, "Gating rules"), compiled at test time with
 * the project's solc, once per process:
 * - an ERC-721 and an ERC-1155: OpenZeppelin 5's (node_modules), with an open mint;
 * - EAS 1.9.0's SchemaRegistry and EAS, from their Solidity sources vendored byte-for-byte in test/contracts/eas/
 *   (MIT, its LICENSE beside them). The npm package `@ethereum-attestation-service/eas-contracts` ships the same
 *   sources and artifacts but depends on hardhat (a whole toolchain for two contracts), so it is not a dependency.
 *   Its sources pin solc 0.8.29; the project's solc is 0.8.28, which compiles them unchanged but for that pragma.
 */
const TEST_TOKENS = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;
import { ERC721 } from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import { ERC1155 } from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
contract TestNft is ERC721 {
  constructor() ERC721("Gating NFT", "GNFT") {}
  function mint(address to, uint256 id) external { _mint(to, id); }
}
contract TestMultiToken is ERC1155 {
  constructor() ERC1155("") {}
  function mint(address to, uint256 id, uint256 amount) external { _mint(to, id, amount, ""); }
}
contract Reverter {
  fallback() external { revert("no"); }
}`;

const EAS_FILES = [
  'EAS.sol',
  'IEAS.sol',
  'SchemaRegistry.sol',
  'ISchemaRegistry.sol',
  'Common.sol',
  'Semver.sol',
  'ISemver.sol',
  'eip1271/EIP1271Verifier.sol',
  'resolver/ISchemaResolver.sol',
];

interface Compiled {
  readonly abi: Abi;
  readonly bytecode: Hex;
}

let compiled: Record<string, Compiled> | undefined;

export function compileGatingContracts(): Record<string, Compiled> {
  if (compiled !== undefined) return compiled;
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string, options: { import: (p: string) => unknown }): string };
  const easDir = fileURLToPath(new URL('../contracts/eas/', import.meta.url));
  const sources: Record<string, { content: string }> = { 'TestTokens.sol': { content: TEST_TOKENS } };
  for (const f of EAS_FILES) {
    const text = readFileSync(`${easDir}${f}`, 'utf8').replace('pragma solidity 0.8.29;', 'pragma solidity ^0.8.28;');
    sources[`eas/${f}`] = { content: text };
  }
  // solc-js takes ~12 s for EAS: the output is kept in build/ (ignored by git) under a hash of every input.
  const hash = createHash('sha256')
    .update(JSON.stringify({ sources, version: solcVersion(require) }))
    .digest('hex');
  const cacheFile = fileURLToPath(
    new URL(`../../build/test-contracts/gating-${hash.slice(0, 16)}.json`, import.meta.url),
  );
  try {
    compiled = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, Compiled>;
    return compiled;
  } catch {
    // Not built yet with these inputs.
  }
  const findImports = (path: string) => {
    try {
      return { contents: readFileSync(require.resolve(path), 'utf8') };
    } catch {
      return { error: `not found: ${path}` };
    }
  };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources,
        settings: {
          optimizer: { enabled: true, runs: 200 },
          evmVersion: 'cancun',
          outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
        },
      }),
      { import: findImports },
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const pick = (unit: string, name: string): Compiled => {
    const c = output.contracts[unit]?.[name];
    if (c === undefined) throw new Error(`solc produced no ${name}`);
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  };
  compiled = {
    TestNft: pick('TestTokens.sol', 'TestNft'),
    TestMultiToken: pick('TestTokens.sol', 'TestMultiToken'),
    Reverter: pick('TestTokens.sol', 'Reverter'),
    SchemaRegistry: pick('eas/SchemaRegistry.sol', 'SchemaRegistry'),
    EAS: pick('eas/EAS.sol', 'EAS'),
  };
  mkdirSync(fileURLToPath(new URL('../../build/test-contracts/', import.meta.url)), { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(compiled));
  return compiled;
}

/** The compiler's and OpenZeppelin's versions: inputs of the build beside the sources. */
function solcVersion(require: NodeJS.Require): string {
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  return `${version('solc')}|${version('@openzeppelin/contracts')}`;
}

async function deploy(client: DevClient, name: string, args: readonly unknown[] = []): Promise<Address> {
  const c = compileGatingContracts()[name];
  if (c === undefined) throw new Error(`no contract ${name}`);
  const hash = await client.deployContract({ abi: c.abi, bytecode: c.bytecode, args: [...args] });
  const receipt = await waitForSuccess(client, hash, `${name} deployment`);
  if (receipt.contractAddress == null) throw new Error(`${name} deployment returned no address`);
  return getAddress(receipt.contractAddress);
}

export const testNftAbi = parseAbi([
  'function mint(address to, uint256 id)',
  'function transferFrom(address from, address to, uint256 id)',
  'function balanceOf(address owner) view returns (uint256)',
]);
export const testMultiTokenAbi = parseAbi(['function mint(address to, uint256 id, uint256 amount)']);
export const schemaRegistryAbi = parseAbi([
  'function register(string schema, address resolver, bool revocable) returns (bytes32)',
]);
export const easAbi = parseAbi([
  'struct AttestationRequestData { address recipient; uint64 expirationTime; bool revocable; bytes32 refUID; bytes data; uint256 value; }',
  'struct AttestationRequest { bytes32 schema; AttestationRequestData data; }',
  'struct RevocationRequestData { bytes32 uid; uint256 value; }',
  'struct RevocationRequest { bytes32 schema; RevocationRequestData data; }',
  'function attest(AttestationRequest request) payable returns (bytes32)',
  'function revoke(RevocationRequest request) payable',
  'event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)',
  'event Registered(bytes32 indexed uid, address indexed registerer, (bytes32 uid, address resolver, bool revocable, string schema) schema)',
]);

export interface GatingContracts {
  readonly nft: Address;
  readonly multiToken: Address;
  readonly reverter: Address;
  readonly schemaRegistry: Address;
  readonly eas: Address;
}

export async function deployGatingContracts(client: DevClient): Promise<GatingContracts> {
  const schemaRegistry = await deploy(client, 'SchemaRegistry');
  return {
    nft: await deploy(client, 'TestNft'),
    multiToken: await deploy(client, 'TestMultiToken'),
    reverter: await deploy(client, 'Reverter'),
    schemaRegistry,
    eas: await deploy(client, 'EAS', [schemaRegistry]),
  };
}
