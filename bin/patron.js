#!/usr/bin/env node
// The `patron` command. Runs the compiled CLI from dist/ (built by `npm install` via the prepare script, or
// `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/bin.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('patron: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
await import(entry.href);
