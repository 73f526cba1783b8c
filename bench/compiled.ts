import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Benchmarks measure what ships: `npm start` runs tsc's output (dist/), not tsx. tsx compiles with esbuild's
 * `keepNames`, which wraps every function created at run time in an `Object.defineProperty(fn, 'name')` call;
 * on a path that creates closures per request that is measurable CPU, and it is not in production.
 *
 * `compileForBench(files)` compiles src/ (tests excluded) plus the given bench entry points with tsc into
 * node_modules/.cache/patron-bench-{hash}/ (incremental: later runs recompile only what changed), adds what the
 * compiled service reads at run time (SQL migrations, and build/contracts through a symlink), and returns the
 * compiled path of each entry point, to run with plain `node`. BENCH_RUNTIME=tsx skips this and runs the
 * sources through tsx instead.
 */
const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
// Per checkout (a second worktree may share node_modules through a symlink).
const cache = path.join(
  root,
  'node_modules',
  '.cache',
  `patron-bench-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`,
);
const out = path.join(cache, 'out');

export type BenchRuntime = 'tsc' | 'tsx';

export function benchRuntime(): BenchRuntime {
  const r = process.env.BENCH_RUNTIME ?? 'tsc';
  if (r !== 'tsc' && r !== 'tsx') throw new Error(`BENCH_RUNTIME must be tsc or tsx, got ${r}`);
  return r;
}

/** Compiles and returns, for each entry (a path relative to the repository), the file to run. */
export function compileForBench(entries: readonly string[]): string[] {
  fs.mkdirSync(cache, { recursive: true });
  const tsconfig = path.join(cache, 'tsconfig.json');
  fs.writeFileSync(
    tsconfig,
    JSON.stringify(
      {
        extends: path.join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: false,
          rootDir: root,
          outDir: out,
          incremental: true,
          tsBuildInfoFile: path.join(cache, 'tsbuildinfo'),
          sourceMap: false,
          declaration: false,
        },
        include: [path.join(root, 'src'), ...entries.map((e) => path.join(root, e))],
        exclude: [path.join(root, 'src/**/*.test.ts')],
      },
      null,
      2,
    ),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig], { stdio: 'pipe' });
  } catch (err) {
    // Type errors elsewhere in the tree (work in progress) do not stop tsc from emitting; a missing output does.
    const missing = entries.filter((e) => !fs.existsSync(compiledPath(e)));
    if (missing.length > 0) throw new Error(`tsc emitted no ${missing.join(', ')}`, { cause: err });
  }
  fs.cpSync(path.join(root, 'src/store/migrations'), path.join(out, 'src/store/migrations'), { recursive: true });
  // Read at run time relative to the compiled files: contract artifacts, and the dashboard's static files.
  for (const dir of ['build', 'dashboard']) {
    const link = path.join(out, dir);
    if (!fs.existsSync(link)) fs.symlinkSync(path.join(root, dir), link, 'dir');
  }
  return entries.map(compiledPath);
}

function compiledPath(entry: string): string {
  return path.join(out, entry.replace(/\.ts$/, '.js'));
}

/**
 * Node's flags for a benchmarked Patron server, so it runs as `npm start` runs the service: tsx's loader when
 * not compiled, then the service's own node flags (package.json `config.nodeArgs`, which `npm start` passes;
 * BENCH_SERVER_NODE_ARGS replaces them, space-separated, empty for node's defaults), then
 * BENCH_CPU_PROF=<dir>: a V8 CPU profile written when the server stops (open it in DevTools).
 */
export function serverExecArgv(compiled: boolean): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    config?: { nodeArgs?: string };
  };
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS ?? pkg.config?.nodeArgs ?? '';
  const profile = process.env.BENCH_CPU_PROF;
  return [
    ...(compiled ? [] : ['--import', 'tsx']),
    ...nodeArgs.split(' ').filter(Boolean),
    ...(profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile]),
  ];
}
