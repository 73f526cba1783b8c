import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * alto's CLI entry (its package `bin`), found from where `@pimlico/alto` resolves, or undefined when it is not
 * installed: it is a devDependency, so an installed `patron` package has none, and then the dev stack runs without a
 * bundler. Only the path is resolved, never the module loaded: alto (GPL-3.0) runs as a program of its own
 * (docs/guides/dev-bundler.md, "Licence"). Its package exports no package.json, hence the walk up to the one
 * named `@pimlico/alto`.
 */
export function altoCli(): string | undefined {
  let entry: string;
  try {
    entry = require.resolve('@pimlico/alto');
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; bin?: { alto?: string } };
    if (pkg.name === '@pimlico/alto' && pkg.bin?.alto !== undefined) return join(dir, pkg.bin.alto);
  }
  return undefined;
}
