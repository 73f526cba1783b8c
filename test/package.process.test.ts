import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { spawnService } from './helpers/serviceProcess.js';
import { TEST_DATABASE_URL } from './helpers/testContext.js';

/**
 * The npm package as an operator gets it: `npm pack` of this checkout (its prepack builds), the tarball's contents,
 * then an install of the tarball into an empty folder, where the installed `patron` prints its help and
 * `patron start` serves /healthz and the dashboard from the installed files (embedded SQLite, the dev chain),
 * and the CLI works on the data it created.
 *
 * The install runs with --ignore-scripts and then does what the scripts would, except compiling better-sqlite3:
 * keccak and secp256k1 pick their prebuilt binaries (`npm rebuild`), and better-sqlite3's addon, which its install
 * script compiles from source here (no prebuilt download: ~3 minutes on this 2-core machine), is copied from this
 * checkout's node_modules, built by `npm install` from the same version (the shrinkwrap pins it; asserted below)
 * for the same Node. PATRON_TEST_PACKAGE_INSTALL_SCRIPTS=1 runs the install's scripts instead (the compile too;
 * give the run time: `node scripts/test.mjs --test-timeout=900000 test/package.process.test.ts`).
 * Dependencies come from npm's cache only (--offline: the checkout's own install put every one there): tests reach
 * nothing but 127.0.0.1, so a cache that lacks one fails the test, naming it, rather than fetching it. The folder's
 * lockfile is the shipped npm-shrinkwrap.json re-rooted under node_modules/patron (`appLockfile`): npm since
 * npm/cli#9262 (2026; 11.19 here) no longer honours a dependency's shrinkwrap and would resolve the ranges against
 * the registry, while a lockfile that names every tarball installs the tree CI tested without asking it anything.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const FULL_INSTALL = process.env.PATRON_TEST_PACKAGE_INSTALL_SCRIPTS === '1';
// The package does not depend on the back end: it runs in the SQLite pass of the suite only.
const skip = TEST_DATABASE_URL === undefined ? false : 'the package test runs in the SQLite pass only';

const packResult = z.array(
  z.object({
    filename: z.string(),
    size: z.number(),
    unpackedSize: z.number(),
    files: z.array(z.object({ path: z.string() })),
  }),
);

function run(file: string, args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const r = spawnSync(file, args, { cwd: opts.cwd, env: opts.env ?? process.env, encoding: 'utf8' });
  assert.equal(r.status, 0, `${file} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** An environment with none of this test run's configuration (PATRON_*, DATABASE_URL, NODE_ENV …). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'npm_config_cache', 'npm_config_nodedir']) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  return env;
}

const lockEntry = z.looseObject({ dev: z.boolean().optional(), resolved: z.string().optional() });
const shrinkwrapFile = z.looseObject({
  packages: z.record(z.string(), lockEntry),
});

/**
 * The lockfile of a folder whose only dependency is the tarball (`spec`): the shipped shrinkwrap's root as
 * node_modules/patron, its other entries where they are (hoisted beside it) without the development-only ones.
 * Every registry entry must name its tarball (prepack fills `resolved` in): without it npm asks the registry.
 */
function appLockfile(shrinkwrapJson: string, spec: string) {
  const { packages } = shrinkwrapFile.parse(JSON.parse(shrinkwrapJson));
  const { '': root, ...rest } = packages;
  assert.ok(root !== undefined, 'the shrinkwrap has a root entry');
  const deps = Object.fromEntries(
    Object.entries(rest).filter(([key, entry]) => entry.dev !== true && key.startsWith('node_modules/')),
  );
  const unresolved = Object.entries(deps).filter(([, e]) => e.resolved === undefined && e.link !== true);
  assert.deepEqual(
    unresolved.map(([key]) => key),
    [],
    'entries of the shrinkwrap that name no tarball',
  );
  const { devDependencies: _, ...shipped } = root;
  return {
    name: 'app',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { dependencies: { patron: spec } },
      'node_modules/patron': { ...shipped, resolved: spec },
      ...deps,
    },
  };
}

describe('npm package', { skip, timeout: FULL_INSTALL ? 600_000 : 240_000 }, () => {
  let work = '';
  let tarball = '';
  let packed: z.infer<typeof packResult>[number];
  let installDir = '';

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'patron-package-'));
    const out = run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root });
    // Lifecycle output goes to stderr with --json; the JSON array starts on a line of its own.
    const [first] = packResult.parse(JSON.parse(out.slice(out.search(/^\[/m))));
    assert.ok(first !== undefined, 'npm pack reported no package');
    packed = first;
    tarball = join(work, packed.filename);
  });
  after(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  test('the tarball holds what the service runs and nothing of the checkout', () => {
    const paths = packed.files.map((f) => f.path);
    for (const needed of [
      'bin/patron.js',
      'dist/main.js',
      'dist/cli/bin.js',
      'dist/requestLog/requestLogThreadMain.js',
      'build/contracts/PatronPaymaster.json',
      'build/contracts/PatronPaymasterV07.json',
      'build/contracts/biconomy/SmartAccountFactory.json',
      'contracts/PatronPaymaster.sol',
      'dashboard/index.html',
      'dashboard/assets/app.js',
      'deploy/systemd/patron.service',
      'deploy/compose.yaml',
      'npm-shrinkwrap.json',
      'README.md',
      'docs/README.md',
      'docs/guides/production.md',
      'ops/prometheus/patron.rules.yml',
      'ops/grafana/patron-dashboard.json',
      'LICENSE',
    ]) {
      assert.ok(paths.includes(needed), `missing from the tarball: ${needed}`);
    }
    // Exactly today's migrations: a stale one left in dist/ would be run at start-up.
    const migrations = readdirSync(join(root, 'src/store/migrations')).sort();
    const shipped = paths
      .filter((p) => p.startsWith('dist/store/migrations/'))
      .map((p) => p.slice('dist/store/migrations/'.length))
      .sort();
    assert.deepEqual(shipped, migrations);
    // Every compiled file has its source (tsc never deletes the output of a moved file).
    for (const p of paths.filter((x) => x.startsWith('dist/') && x.endsWith('.js'))) {
      assert.ok(existsSync(join(root, 'src', p.slice('dist/'.length).replace(/\.js$/, '.ts'))), `stale: ${p}`);
    }
    const forbidden = [
      /(^|\/)node_modules\//,
      /^(src|test|bench|scripts|data|coverage|test-artifacts)\//,
      /\.test\.(ts|js)$/,
      /\.(ts|map|sqlite|sqlite-wal|key|log)$/,
      /(^|\/)\.env$/,
      /(^|\/)\.tsbuildinfo$/,
      /(^|\/)\.build-stamp$/,
      /^package-lock\.json$/,
    ];
    const leaked = paths.filter((p) => forbidden.some((re) => re.test(p)));
    assert.deepEqual(leaked, [], 'files that must not ship');
    // 0.48 MB packed / 1.9 MB unpacked in 2026-11 (a third of it the shrinkwrap): a jump means something leaked in.
    assert.ok(packed.size < 1_500_000, `tarball ${packed.size} bytes`);
    assert.ok(packed.unpackedSize < 5_000_000, `unpacked ${packed.unpackedSize} bytes`);
  });

  test('installed from the tarball into an empty folder, `patron` helps, starts, serves and stops', async () => {
    installDir = join(work, 'app');
    const env = cleanEnv();
    run('mkdir', ['-p', installDir], { cwd: work });
    const spec = `file:../${packed.filename}`;
    const shrinkwrap = run('tar', ['-xzOf', tarball, 'package/npm-shrinkwrap.json'], { cwd: work });
    writeFileSync(
      join(installDir, 'package.json'),
      `${JSON.stringify({ private: true, dependencies: { patron: spec } })}\n`,
    );
    writeFileSync(join(installDir, 'package-lock.json'), `${JSON.stringify(appLockfile(shrinkwrap, spec))}\n`);
    const installed = spawnSync(
      'npm',
      ['ci', '--offline', '--no-audit', '--no-fund', ...(FULL_INSTALL ? [] : ['--ignore-scripts'])],
      { cwd: installDir, env, encoding: 'utf8' },
    );
    assert.equal(installed.status, 0, `npm install of the tarball failed:\n${installed.stdout}\n${installed.stderr}`);
    const modules = join(installDir, 'node_modules');
    if (!FULL_INSTALL) {
      run('npm', ['rebuild', '--loglevel=error', 'keccak', 'secp256k1'], { cwd: installDir, env });
      for (const pkg of ['better-sqlite3', 'better-sqlite3-node22']) {
        const addon = join('build', 'Release', 'better_sqlite3.node');
        if (!existsSync(join(modules, pkg)) || !existsSync(join(root, 'node_modules', pkg, addon))) continue;
        const version = (dir: string) => JSON.parse(readFileSync(join(dir, pkg, 'package.json'), 'utf8')).version;
        assert.equal(version(modules), version(join(root, 'node_modules')), `${pkg}: the lockfile's version`);
        run('mkdir', ['-p', join(modules, pkg, 'build', 'Release')], { cwd: work });
        copyFileSync(join(root, 'node_modules', pkg, addon), join(modules, pkg, addon));
      }
    }
    // The package's own files, not a link to this checkout.
    const bin = join(modules, '.bin', 'patron');
    assert.ok(realpathSync(bin).startsWith(realpathSync(installDir)), realpathSync(bin));

    const help = run(bin, ['--help'], { cwd: installDir, env });
    assert.match(help, /^Usage: patron <command>/);
    assert.match(help, /^ {2}start +run the service/m);

    const dataDir = join(work, 'data');
    const service = spawnService(
      { PATRON_DATA_DIR: dataDir, HOST: '127.0.0.1' },
      {
        command: [bin, 'start'],
        cwd: installDir,
        baseEnv: env,
      },
    );
    try {
      const base = await service.baseUrl(120_000);
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      // The installed package knows its version and schema (package.json and the migrations it ships).
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
      const healthz = (await health.json()) as { status: string; version: string; schema: string };
      assert.equal(healthz.status, 'ok');
      assert.equal(healthz.version, pkg.version);
      assert.match(healthz.schema, /^\d{4}_[a-z0-9_]+$/);
      // The dashboard's files and the dev chain's contracts come from the package.
      const page = await fetch(`${base}/dashboard/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      assert.equal((await fetch(`${base}/dashboard/assets/app.js`)).status, 200);
      assert.match(service.output(), /chain 31337 \(embedded dev chain/);
      // The CLI on the data the service created (migrations, master key): the demo account.
      const accounts = run(bin, ['account', 'list', '--json'], {
        cwd: installDir,
        env: { ...env, PATRON_DATA_DIR: dataDir },
      });
      assert.match(accounts, /demo@patron\.local/);
    } finally {
      await service.stop();
    }
    assert.equal(service.child.exitCode, 0, service.output());
  });
});
