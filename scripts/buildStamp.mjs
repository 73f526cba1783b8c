// Whether the build (contracts, tsc, assets) is current: a digest of every input's path, size and mtime,
// compared with the one written after the last successful build. Used by `npm start` (build-if-needed.mjs)
// so that an unchanged checkout starts without running tsc (~9 s) again.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the build reads: a change to any of these rebuilds. */
export const BUILD_INPUTS = [
  'src',
  'contracts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  'scripts/build-contracts.mjs',
  'scripts/copy-assets.mjs',
];

function walk(root, rel, out) {
  const abs = join(root, rel);
  if (!existsSync(abs)) return;
  const st = statSync(abs);
  if (st.isDirectory()) {
    for (const name of readdirSync(abs).sort()) walk(root, join(rel, name), out);
  } else {
    out.push(`${relative(root, abs)}\t${st.size}\t${st.mtimeMs}`);
  }
}

/** The inputs' digest under `root` (paths, sizes, mtimes; never the contents: stat only, a few ms). */
export function inputsDigest(root, inputs = BUILD_INPUTS) {
  const lines = [];
  for (const input of inputs) walk(root, input, lines);
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** True when `stampFile` holds the current digest and every output exists. */
export function isBuildCurrent({ root, stampFile, outputs, inputs = BUILD_INPUTS }) {
  if (!existsSync(stampFile) || !outputs.every((o) => existsSync(join(root, o)))) return false;
  return readFileSync(stampFile, 'utf8').trim() === inputsDigest(root, inputs);
}

export function writeBuildStamp({ root, stampFile, inputs = BUILD_INPUTS }) {
  writeFileSync(stampFile, `${inputsDigest(root, inputs)}\n`);
}
