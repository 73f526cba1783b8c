// Compiles the Solidity the service deploys with solc-js from npm (the compiler version is the npm package's,
// never downloaded) and writes build/contracts/[<dir>/]<Name>.json = { contractName, abi, bytecode,
// deployedBytecode, immutableReferences, solcVersion, sourceHash }. Two kinds of build (BUILDS below):
// - Patron's own contracts/*.sol, with the `solc` dependency;
// - Biconomy Smart Account v2 (factory, implementation, ECDSA ownership module) from the npm package
//   @biconomy-devx/account-contracts-v2, with solc 0.8.17 (their pinned pragma) and OpenZeppelin 4.9, for the
//   dev chain, where `@biconomy/account`'s smart-account flow expects them at their canonical addresses.
//
// Loading solc-js alone takes ~0.5 s and compiling seconds, while tests run this before every run; so each build
// first hashes every input (the sources plus their transitive imports, the solc version and the settings) and
// does nothing when all of its artifacts already carry that hash.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

const OUTPUTS = [
  'abi',
  'evm.bytecode.object',
  'evm.deployedBytecode.object',
  'evm.deployedBytecode.immutableReferences',
];
const BICONOMY_PACKAGE = '@biconomy-devx/account-contracts-v2';

/** Patron's own contracts: every contracts/*.sol, each defining the contract named like its file. */
function patronBuild() {
  const roots = readdirSync(join(root, 'contracts'))
    .filter((f) => f.endsWith('.sol'))
    .sort()
    .map((f) => `contracts/${f}`);
  return {
    label: 'Patron',
    solc: 'solc',
    outDir: join(root, 'build', 'contracts'),
    roots,
    contracts: roots.map((unit) => ({ unit, name: posix.basename(unit, '.sol') })),
    // cancun: PUSH0/MCOPY/transient storage, supported by mainnet and the major L2s Patron targets.
    settings: { optimizer: { enabled: true, runs: 1000 }, evmVersion: 'cancun' },
    readUnit: (unit) => {
      if (unit.startsWith('contracts/') && !unit.includes('..')) return readFileSync(join(root, unit), 'utf8');
      return readPackageUnit(unit);
    },
  };
}

/**
 * Biconomy Smart Account v2, compiled as Biconomy deployed it (solc 0.8.17, via IR, 800 runs): with those
 * settings the Proxy's creation code, which the SDK pins (PROXY_CREATION_CODE) to derive account addresses, is
 * byte-identical to ours apart from its CBOR metadata (src/chain/biconomySmartAccountV2.ts splices theirs in).
 * The account and its module are compiled without IR (seconds instead of minutes in solc-js); the SDK does not
 * hash their code, and they are installed at their canonical addresses by code, not by CREATE2.
 */
function biconomyBuilds() {
  const unit = (path) => `contracts/smart-account/${path}`;
  const readUnit = (u) => {
    if (u.startsWith('contracts/') && !u.includes('..')) return readPackageUnit(`${BICONOMY_PACKAGE}/${u}`);
    // Their sources import OpenZeppelin 4.x (Ownable without a constructor argument, ECDSA's v4 helpers).
    if (u.startsWith('@openzeppelin/contracts/'))
      return readPackageUnit(u.replace('@openzeppelin/contracts/', '@openzeppelin/contracts-v4/'));
    return readPackageUnit(u);
  };
  const common = { solc: 'solc-0.8.17', outDir: join(root, 'build', 'contracts', 'biconomy'), readUnit };
  return [
    {
      ...common,
      label: 'Biconomy SA v2 factory',
      roots: [unit('factory/SmartAccountFactory.sol')],
      contracts: [
        { unit: unit('factory/SmartAccountFactory.sol'), name: 'SmartAccountFactory' },
        { unit: unit('Proxy.sol'), name: 'Proxy' },
        { unit: unit('handler/DefaultCallbackHandler.sol'), name: 'DefaultCallbackHandler' },
      ],
      settings: { optimizer: { enabled: true, runs: 800 }, viaIR: true },
    },
    {
      ...common,
      label: 'Biconomy SA v2 account',
      roots: [unit('SmartAccount.sol'), unit('modules/EcdsaOwnershipRegistryModule.sol')],
      contracts: [
        { unit: unit('SmartAccount.sol'), name: 'SmartAccount' },
        { unit: unit('modules/EcdsaOwnershipRegistryModule.sol'), name: 'EcdsaOwnershipRegistryModule' },
      ],
      settings: { optimizer: { enabled: true, runs: 800 } },
    },
  ];
}

/** A package import (`@scope/pkg/...`) from node_modules. */
function readPackageUnit(unit) {
  if (unit.startsWith('@') && !unit.includes('..')) return readFileSync(require.resolve(unit), 'utf8');
  throw new Error(`cannot resolve Solidity import "${unit}" (only contracts/ and @scope/package paths)`);
}

// Every import form (`import "x";`, `import {A} from "x";`, `import * as A from "x";`) at the start of a line.
const IMPORT_RE = /^\s*import\s+(?:[^;"']*?\s+from\s+)?["']([^"']+)["']/gm;

/** Resolves an import the way solc does: relative to the importing unit's directory, else as written. */
function resolveImport(fromUnit, spec) {
  if (spec.startsWith('./') || spec.startsWith('../'))
    return posix.normalize(posix.join(posix.dirname(fromUnit), spec));
  return spec;
}

/** The transitive closure of source units reachable from the roots, as a sorted Map name -> contents. */
function collectSources(build) {
  const sources = new Map();
  const pending = [...build.roots];
  while (pending.length > 0) {
    const unit = pending.pop();
    if (sources.has(unit)) continue;
    const contents = build.readUnit(unit);
    sources.set(unit, contents);
    for (const m of contents.matchAll(IMPORT_RE)) pending.push(resolveImport(unit, m[1]));
  }
  return new Map([...sources].sort(([a], [b]) => a.localeCompare(b)));
}

function computeSourceHash(sources, solcVersion, settings) {
  const h = createHash('sha256');
  h.update(JSON.stringify({ solcVersion, settings }));
  for (const [name, contents] of sources) h.update(`\0${name}\0${contents}`);
  return `0x${h.digest('hex')}`;
}

function readStoredHash(outDir, contractName) {
  try {
    return JSON.parse(readFileSync(join(outDir, `${contractName}.json`), 'utf8')).sourceHash;
  } catch {
    return undefined;
  }
}

function compile(build, sources) {
  const solc = require(build.solc);
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(build.roots.map((r) => [r, { content: sources.get(r) }])),
    settings: { ...build.settings, outputSelection: { '*': { '*': OUTPUTS } } },
  };
  // The import callback serves the units already read for the hash, so the hash covers exactly what solc saw.
  const findImports = (unit) => {
    const contents = sources.get(unit);
    return contents === undefined ? { error: `not found: ${unit}` } : { contents };
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const diagnostics = output.errors ?? [];
  // Warnings in third-party sources are theirs to fix; ours are shown.
  if (build.label === 'Patron')
    for (const d of diagnostics.filter((e) => e.severity !== 'error')) console.warn(d.formattedMessage);
  const errors = diagnostics.filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    for (const e of errors) console.error(e.formattedMessage);
    console.error(`build-contracts: ${build.label}: compilation failed with ${errors.length} error(s)`);
    process.exit(1);
  }
  return { output, solcVersion: solc.version() };
}

function writeArtifact(outDir, artifact) {
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${artifact.contractName}.json`);
  // Write-then-rename so a concurrent reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(artifact, null, 2)}\n`);
  renameSync(tmp, file);
}

function runBuild(build) {
  const started = performance.now();
  const names = build.contracts.map((c) => c.name);
  const sources = collectSources(build);
  const pinnedVersion = JSON.parse(readFileSync(require.resolve(`${build.solc}/package.json`), 'utf8')).version;
  const sourceHash = computeSourceHash(sources, pinnedVersion, build.settings);
  if (names.every((n) => readStoredHash(build.outDir, n) === sourceHash)) {
    console.log(`build-contracts: up to date (${names.join(', ')})`);
    return;
  }
  const { output, solcVersion } = compile(build, sources);
  for (const { unit, name: contractName } of build.contracts) {
    const c = output.contracts?.[unit]?.[contractName];
    if (c === undefined) {
      console.error(`build-contracts: ${unit} must define a contract named ${contractName}`);
      process.exit(1);
    }
    writeArtifact(build.outDir, {
      contractName,
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      immutableReferences: c.evm.deployedBytecode.immutableReferences ?? {},
      solcVersion,
      sourceHash,
    });
  }
  const ms = Math.round(performance.now() - started);
  console.log(`build-contracts: compiled ${names.join(', ')} with solc ${solcVersion} in ${ms} ms`);
}

for (const build of [patronBuild(), ...biconomyBuilds()]) runBuild(build);
