import { spawnSync } from 'node:child_process';

/**
 * Every document of a YAML file as plain JSON values, read by PyYAML (Debian's python3-yaml; .ci/run installs it):
 * the project has no YAML parser of its own. PyYAML reads YAML 1.1 as Kubernetes' and compose's Go parsers do, so an
 * unquoted `on` or `yes` becomes a boolean here as it would there.
 */
export function yamlDocuments(text: string, name: string): unknown[] {
  const r = spawnSync(
    'python3',
    [
      '-c',
      'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(sys.stdin) if d is not None], sys.stdout)',
    ],
    { input: text, encoding: 'utf8' },
  );
  if (r.error !== undefined)
    throw new Error(`python3 (with python3-yaml) is needed to read ${name}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${name} is not valid YAML:\n${r.stderr}`);
  return JSON.parse(r.stdout) as unknown[];
}
