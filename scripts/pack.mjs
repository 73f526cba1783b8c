// `npm pack` / `npm publish` hooks (package.json prepack and postpack).
//
// prepack: builds what the package ships (dist/, build/contracts/) when an input changed, removes from dist/ what
// no source produces any more (tsc never deletes the output of a moved or deleted file, and a stale migration
// there would even be run), and writes npm-shrinkwrap.json from package-lock.json so that an install of the
// package gets exactly the dependency tree CI tested (npm honours a shipped shrinkwrap, never a package-lock).
// postpack: removes that npm-shrinkwrap.json again; the checkout keeps package-lock.json only.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const shrinkwrap = join(root, 'npm-shrinkwrap.json');

/** Every file under `dir`, as paths relative to `base`. */
function files(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p, base) : [relative(base, p)];
  });
}

/** The source a dist/ file comes from: x.js and x.js.map from src/x.ts, an asset (SQL) from src/ itself. */
function sourceOf(rel) {
  const js = /^(.*)\.js(\.map)?$/.exec(rel);
  return join(root, 'src', js?.[1] !== undefined ? `${js[1]}.ts` : rel);
}

function prepack() {
  const build = spawnSync(process.execPath, [join(root, 'scripts/build-if-needed.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  let removed = 0;
  for (const rel of files(dist)) {
    if (rel.startsWith('.')) continue; // .tsbuildinfo, .build-stamp: the package's `files` leaves them out
    if (!existsSync(sourceOf(rel))) {
      rmSync(join(dist, rel));
      removed++;
    }
  }
  if (removed > 0) process.stdout.write(`prepack: removed ${removed} stale file(s) from dist/\n`);
  writeFileSync(
    shrinkwrap,
    `${JSON.stringify(withResolved(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))), null, 2)}\n`,
  );
}

/**
 * The lockfile with each registry package's tarball URL filled in (this repository's lockfile leaves `resolved`
 * out): without it, installing the package fetches every dependency's metadata first, one at a time, to find
 * the tarball (minutes against a slow registry, and `npm install --offline` fails where that metadata was never
 * cached). The URL is the registry's standard one, under the registry npm is configured with.
 */
function withResolved(lock) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['config', 'get', 'registry'], { cwd: root, encoding: 'utf8' });
  const registry =
    r.status === 0 && /^https?:\/\//.test(r.stdout.trim()) ? r.stdout.trim().replace(/\/?$/, '/') : undefined;
  if (registry === undefined) return lock;
  for (const [key, entry] of Object.entries(lock.packages ?? {})) {
    if (key === '' || entry.link === true || entry.resolved !== undefined || entry.integrity === undefined) continue;
    // An npm alias (`solc-0.8.17`) records the real package's name.
    const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    entry.resolved = `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
  }
  return lock;
}

function postpack() {
  rmSync(shrinkwrap, { force: true });
}

const step = process.argv[2];
if (step === 'prepack') prepack();
else if (step === 'postpack') postpack();
else {
  process.stderr.write('usage: node scripts/pack.mjs prepack|postpack\n');
  process.exit(2);
}
