// Compiles contracts/*.sol with the npm `solc` package (solc-js: the compiler version is the npm version pinned
// in package.json, never downloaded) and writes build/contracts/<Name>.json = { contractName, abi, bytecode,
// deployedBytecode, solcVersion, sourceHash } for the contract named like each file.
//
// Loading solc-js alone takes ~0.5 s and compiling seconds, while tests run this before every run; so the script
// first hashes every input (our sources plus the transitive imports from node_modules, the solc version and
// the settings) and does nothing when all artifacts already carry that hash.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const outDir = join(root, 'build', 'contracts');

// cancun: PUSH0/MCOPY/transient storage, supported by mainnet and the major L2s Patron targets.
const SETTINGS = {
  optimizer: { enabled: true, runs: 1000 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};

/** Reads a source unit: our own files from contracts/, package imports (`@scope/pkg/...`) from node_modules. */
function readUnit(unitName) {
  if (unitName.startsWith('contracts/') && !unitName.includes('..')) return readFileSync(join(root, unitName), 'utf8');
  if (unitName.startsWith('@') && !unitName.includes('..')) return readFileSync(require.resolve(unitName), 'utf8');
  throw new Error(`cannot resolve Solidity import "${unitName}" (only contracts/ and @scope/package paths)`);
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
function collectSources(roots) {
  const sources = new Map();
  const pending = [...roots];
  while (pending.length > 0) {
    const unit = pending.pop();
    if (sources.has(unit)) continue;
    const contents = readUnit(unit);
    sources.set(unit, contents);
    for (const m of contents.matchAll(IMPORT_RE)) pending.push(resolveImport(unit, m[1]));
  }
  return new Map([...sources].sort(([a], [b]) => a.localeCompare(b)));
}

function computeSourceHash(sources, solcVersion) {
  const h = createHash('sha256');
  h.update(JSON.stringify({ solcVersion, settings: SETTINGS }));
  for (const [name, contents] of sources) h.update(`\0${name}\0${contents}`);
  return `0x${h.digest('hex')}`;
}

function readStoredHash(contractName) {
  try {
    return JSON.parse(readFileSync(join(outDir, `${contractName}.json`), 'utf8')).sourceHash;
  } catch {
    return undefined;
  }
}

function compile(roots, sources) {
  const solc = require('solc');
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(roots.map((r) => [r, { content: sources.get(r) }])),
    settings: SETTINGS,
  };
  // The import callback serves the units already read for the hash, so the hash covers exactly what solc saw.
  const findImports = (unit) => {
    const contents = sources.get(unit);
    return contents === undefined ? { error: `not found: ${unit}` } : { contents };
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const diagnostics = output.errors ?? [];
  for (const d of diagnostics.filter((e) => e.severity !== 'error')) console.warn(d.formattedMessage);
  const errors = diagnostics.filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    for (const e of errors) console.error(e.formattedMessage);
    console.error(`build-contracts: compilation failed with ${errors.length} error(s)`);
    process.exit(1);
  }
  return { output, solcVersion: solc.version() };
}

function writeArtifact(artifact) {
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${artifact.contractName}.json`);
  // Write-then-rename so a concurrent reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(artifact, null, 2)}\n`);
  renameSync(tmp, file);
}

function main() {
  const started = performance.now();
  const roots = readdirSync(join(root, 'contracts'))
    .filter((f) => f.endsWith('.sol'))
    .sort()
    .map((f) => `contracts/${f}`);
  const names = roots.map((r) => posix.basename(r, '.sol'));
  const sources = collectSources(roots);
  const pinnedVersion = JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')).version;
  const sourceHash = computeSourceHash(sources, pinnedVersion);
  if (names.every((n) => readStoredHash(n) === sourceHash)) {
    console.log(`build-contracts: up to date (${names.join(', ')})`);
    return;
  }
  const { output, solcVersion } = compile(roots, sources);
  for (const [i, unit] of roots.entries()) {
    const contractName = names[i];
    const c = output.contracts?.[unit]?.[contractName];
    if (c === undefined) {
      console.error(`build-contracts: ${unit} must define a contract named ${contractName}`);
      process.exit(1);
    }
    const bytecode = `0x${c.evm.bytecode.object}`;
    const deployedBytecode = `0x${c.evm.deployedBytecode.object}`;
    writeArtifact({ contractName, abi: c.abi, bytecode, deployedBytecode, solcVersion, sourceHash });
  }
  const ms = Math.round(performance.now() - started);
  console.log(`build-contracts: compiled ${names.join(', ')} with solc ${solcVersion} in ${ms} ms`);
}

main();
