import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { yamlDocuments } from './helpers/yamlDocuments.js';

/**
 * deploy/'s health checks run wherever an operator runs them: Docker and podman exec a `CMD` list directly, but
 * podman-compose 1.0 (Debian 12's) joins a `CMD` list into one `/bin/sh -c` string, so the `node -e "…(…)…"` check it
 * replaced failed there with `Syntax error: "(" unexpected`. Each check must be an exec list of plain words (the same
 * command however it is run) or a shell string dash accepts; and the npm package ships what deploy/ and ops/ need.
 */
const root = new URL('..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** Words a shell leaves as they are: what podman-compose's join cannot change. */
const PLAIN_WORD = /^[A-Za-z0-9_./:=@%+,-]+$/;

function dashAccepts(script: string): string | undefined {
  const r = spawnSync('dash', ['-n', '-c', script], { encoding: 'utf8' });
  if (r.error !== undefined) throw r.error;
  return r.status === 0 ? undefined : r.stderr.trim();
}

/** What is wrong with one health check's test (compose's `test:` or a HEALTHCHECK's command), or nothing. */
function healthcheckProblem(check: unknown): string | undefined {
  if (typeof check === 'string') return dashAccepts(check);
  const list = z.array(z.string()).min(2).safeParse(check);
  if (!list.success) return `not a string or a list of strings: ${JSON.stringify(check)}`;
  const [kind, ...rest] = list.data;
  if (kind === 'CMD-SHELL') return rest.length === 1 ? dashAccepts(rest[0] ?? '') : 'CMD-SHELL takes one string';
  if (kind !== 'CMD') return `the first word must be CMD or CMD-SHELL, not ${kind}`;
  const shell = rest[0] === 'sh' || rest[0]?.endsWith('/sh') === true || rest[0] === 'bash';
  if (shell) return `runs a shell (${rest.join(' ')}): use CMD-SHELL, or no shell`;
  const unsafe = rest.filter((word) => !PLAIN_WORD.test(word));
  if (unsafe.length > 0)
    return `words a shell would change (podman-compose runs CMD lists with sh -c): ${unsafe.join(' ')}`;
  return dashAccepts(rest.join(' '));
}

const composeFile = z.object({
  services: z.record(z.string(), z.object({ healthcheck: z.object({ test: z.unknown() }).optional() })),
});

describe('deploy/ health checks', () => {
  test('every compose health check is a plain exec list or a shell string dash accepts', () => {
    const [doc] = yamlDocuments(read('deploy/compose.yaml'), 'deploy/compose.yaml');
    const { services } = composeFile.parse(doc);
    const checks = Object.entries(services).filter(([, s]) => s.healthcheck !== undefined);
    assert.deepEqual(checks.map(([name]) => name).sort(), ['patron', 'postgres']);
    for (const [name, service] of checks) {
      assert.equal(healthcheckProblem(service.healthcheck?.test), undefined, `compose service ${name}`);
    }
  });

  test("the Containerfile's HEALTHCHECK is an exec list of plain words", () => {
    const lines = read('deploy/Containerfile').replace(/\\\n/g, ' ').split('\n');
    const checks = lines.filter((l) => /^HEALTHCHECK\s/.test(l));
    assert.equal(checks.length, 1);
    const command = /\sCMD\s+(.*)$/.exec(checks[0] ?? '')?.[1]?.trim() ?? '';
    // The exec form is a JSON array; anything else is the shell form, run by /bin/sh -c.
    const check = command.startsWith('[') ? ['CMD', ...z.array(z.string()).parse(JSON.parse(command))] : command;
    assert.equal(healthcheckProblem(check), undefined, command);
    assert.deepEqual(check, ['CMD', 'patron', 'healthcheck']);
  });

  test('the check tells the broken forms apart', () => {
    const old = "fetch('http://127.0.0.1:3000/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))";
    assert.match(String(healthcheckProblem(['CMD', 'node', '-e', old])), /words a shell would change/);
    assert.match(String(healthcheckProblem(`node -e ${old}`)), /\(/);
    assert.match(String(healthcheckProblem(['CMD', 'sh', '-c', 'true'])), /runs a shell/);
    assert.equal(healthcheckProblem(['CMD-SHELL', 'pg_isready -U patron || exit 1']), undefined);
    assert.equal(healthcheckProblem(['CMD', 'pg_isready', '-U', 'patron']), undefined);
  });
});

const packList = z.array(z.object({ files: z.array(z.object({ path: z.string() })) }));

describe('the npm package', () => {
  test('ships ops/ (the Prometheus rules, the Grafana dashboard) and deploy/ (compose, Kubernetes)', () => {
    // --ignore-scripts: the list comes from package.json "files" alone, without prepack's build (the full pack and
    // install are test/package.process.test.ts).
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: new URL('.', root),
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const [packed] = packList.parse(JSON.parse(r.stdout.slice(r.stdout.search(/^\[/m))));
    const paths = new Set(packed?.files.map((f) => f.path));
    for (const needed of [
      'ops/prometheus/patron.rules.yml',
      'ops/grafana/patron-dashboard.json',
      'ops/README.md',
      'deploy/compose.yaml',
      'deploy/build-image.sh',
      'deploy/kubernetes/kustomization.yaml',
      'deploy/kubernetes/deployment.yaml',
    ]) {
      assert.ok(paths.has(needed), `missing from the package: ${needed}`);
    }
  });
});
