import { readFileSync } from 'node:fs';

/**
 * This build's version, from Patron's own package.json: found by walking up from this module (src/ under tsx,
 * dist/ when built, a benchmark's compiled copy), read once. "unknown" where no package.json of Patron's is found,
 * rather than a failed start: a version is for reports, never for behaviour.
 */
let cached: string | undefined;

export function patronVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  for (let up = 1; up <= 6; up++) {
    try {
      const text = readFileSync(new URL(`${'../'.repeat(up)}package.json`, import.meta.url), 'utf8');
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === 'patron' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // Not at this level: look further up.
    }
  }
  return cached;
}
