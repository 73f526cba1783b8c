import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { z } from 'zod';
import { KNOWN_SETTINGS } from '../src/config/knownSettings.js';
import { yamlDocuments } from './helpers/yamlDocuments.js';

/**
 * deploy/kubernetes/ as `kubectl apply -k` would take it: every manifest checked against the Kubernetes API's own
 * schemas (kubernetes-models, generated from the OpenAPI spec: a misspelled field, a string where a number goes, a
 * missing required field fail), then what a schema cannot see: a probe or Service port named that no container port
 * has, selectors that select no pod, a volume mount of no volume, a Secret key or ConfigMap the manifests do not
 * agree on, and an environment variable Patron does not read (a renamed setting would otherwise be set in vain:
 * Patron refuses an unknown PATRON_* name at start, the rest it ignores).
 */
const dir = new URL('../deploy/kubernetes/', import.meta.url);

const kustomization = z.strictObject({
  apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
  kind: z.literal('Kustomization'),
  labels: z.array(z.object({ pairs: z.record(z.string(), z.string()), includeSelectors: z.boolean() })).optional(),
  resources: z.array(z.string()),
  images: z.array(z.strictObject({ name: z.string(), newName: z.string(), newTag: z.string() })).optional(),
});

/** The API's own check of one object (`is` narrows by apiVersion and kind; `validate()` throws what is wrong). */
function schemaCheck(doc: unknown): string {
  if (ConfigMap.is(doc)) new ConfigMap(doc).validate();
  else if (Service.is(doc)) new Service(doc).validate();
  else if (Deployment.is(doc)) new Deployment(doc).validate();
  else if (PodDisruptionBudget.is(doc)) new PodDisruptionBudget(doc).validate();
  else throw new Error(`no schema for ${JSON.stringify(doc).slice(0, 80)}: add its kind to schemaCheck`);
  return z.object({ kind: z.string(), metadata: z.object({ name: z.string() }) }).parse(doc).metadata.name;
}

// The fields the cross-checks read (the schema check above has checked their types already).
const named = z.object({ name: z.string() });
const portRef = z.union([z.string(), z.number()]);
const probe = z.object({ httpGet: z.object({ path: z.string(), port: portRef }) }).optional();
const container = z.object({
  name: z.string(),
  ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number() })).default([]),
  env: z
    .array(
      z.object({
        name: z.string(),
        value: z.string().optional(),
        valueFrom: z.object({ secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional() }).optional(),
      }),
    )
    .default([]),
  envFrom: z.array(z.object({ configMapRef: named.optional(), secretRef: named.optional() })).default([]),
  startupProbe: probe,
  livenessProbe: probe,
  readinessProbe: probe,
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })).default([]),
});
const labels = z.record(z.string(), z.string());
const deployment = z.object({
  spec: z.object({
    selector: z.object({ matchLabels: labels }),
    template: z.object({
      metadata: z.object({ labels }),
      spec: z.object({ containers: z.array(container), volumes: z.array(named).default([]) }),
    }),
  }),
});
const service = z.object({
  spec: z.object({ selector: labels, ports: z.array(z.object({ name: z.string(), targetPort: portRef })) }),
});
const pdb = z.object({ spec: z.object({ selector: z.object({ matchLabels: labels }) }) });
const configMap = z.object({ metadata: named, data: z.record(z.string(), z.string()) });

interface Manifests {
  readonly docs: readonly { file: string; kind: string; doc: unknown }[];
}

function readManifests(files?: Readonly<Record<string, string>>): Manifests {
  const text = (file: string) => files?.[file] ?? readFileSync(new URL(file, dir), 'utf8');
  const kustom = kustomization.parse(yamlDocuments(text('kustomization.yaml'), 'kustomization.yaml')[0]);
  const docs = kustom.resources.flatMap((file) =>
    yamlDocuments(text(file), file).map((doc) => ({
      file,
      kind: z.object({ kind: z.string() }).parse(doc).kind,
      doc,
    })),
  );
  return { docs };
}

const selects = (selector: Record<string, string>, podLabels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => podLabels[k] === v);

/** Everything wrong with the manifests, one line each: the schema's findings, then the cross-references. */
function problems(m: Manifests): string[] {
  const found: string[] = [];
  for (const { file, doc } of m.docs) {
    try {
      schemaCheck(doc);
    } catch (err) {
      found.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (found.length > 0) return found;
  const of = (kind: string) => m.docs.filter((d) => d.kind === kind);
  const configMaps = of('ConfigMap').map((d) => configMap.parse(d.doc).metadata.name);
  for (const { file, doc } of of('Deployment')) {
    const spec = deployment.parse(doc).spec;
    const podLabels = spec.template.metadata.labels;
    if (!selects(spec.selector.matchLabels, podLabels)) found.push(`${file}: the selector does not select its pods`);
    const volumes = new Set(spec.template.spec.volumes.map((v) => v.name));
    const ports = spec.template.spec.containers.flatMap((c) => c.ports);
    const portNames = new Set(ports.flatMap((p) => (p.name === undefined ? [] : [p.name])));
    for (const c of spec.template.spec.containers) {
      for (const [which, p] of Object.entries({
        startup: c.startupProbe,
        liveness: c.livenessProbe,
        readiness: c.readinessProbe,
      })) {
        const port = p?.httpGet.port;
        if (typeof port === 'string' && !portNames.has(port))
          found.push(`${file}: ${which} probe's port "${port}" is no container port's name`);
      }
      for (const mount of c.volumeMounts) {
        if (!volumes.has(mount.name))
          found.push(`${file}: volume mount ${mount.mountPath} names no volume "${mount.name}"`);
      }
      for (const ref of c.envFrom) {
        if (ref.configMapRef !== undefined && !configMaps.includes(ref.configMapRef.name)) {
          found.push(`${file}: envFrom names no ConfigMap "${ref.configMapRef.name}" of these manifests`);
        }
      }
    }
    for (const s of of('Service')) {
      const svc = service.parse(s.doc).spec;
      if (!selects(svc.selector, podLabels)) found.push(`${s.file}: the selector selects no pod of ${file}`);
      for (const port of svc.ports) {
        if (typeof port.targetPort === 'string' && !portNames.has(port.targetPort)) {
          found.push(`${s.file}: port ${port.name}'s targetPort "${port.targetPort}" is no container port's name`);
        }
      }
    }
    for (const b of of('PodDisruptionBudget')) {
      if (!selects(pdb.parse(b.doc).spec.selector.matchLabels, podLabels))
        found.push(`${b.file}: the selector selects no pod`);
    }
  }
  return found;
}

/** Every variable the manifests give Patron's container: its env, and the keys of the ConfigMaps it takes whole. */
function envNames(m: Manifests): string[] {
  const maps = new Map(
    of(m, 'ConfigMap').map((d) => {
      const c = configMap.parse(d.doc);
      return [c.metadata.name, Object.keys(c.data)] as const;
    }),
  );
  return of(m, 'Deployment').flatMap(({ doc }) =>
    deployment
      .parse(doc)
      .spec.template.spec.containers.flatMap((c) => [
        ...c.env.map((e) => e.name),
        ...c.envFrom.flatMap((r) => (r.configMapRef === undefined ? [] : (maps.get(r.configMapRef.name) ?? []))),
      ]),
  );
}
const of = (m: Manifests, kind: string) => m.docs.filter((d) => d.kind === kind);

/** The variables Patron reads besides its PATRON_* settings (src/config/config.ts's schema names each). */
const CONFIG_SOURCE = readFileSync(new URL('../src/config/config.ts', import.meta.url), 'utf8');
const readByConfig = (name: string) => new RegExp(`^\\s+${name}: `, 'm').test(CONFIG_SOURCE);

describe('deploy/kubernetes', () => {
  const manifests = readManifests();

  test('kustomization.yaml lists every manifest of the folder', () => {
    const listed = kustomization.parse(
      yamlDocuments(readFileSync(new URL('kustomization.yaml', dir), 'utf8'), 'kustomization.yaml')[0],
    ).resources;
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual([...listed].sort(), files.sort());
    assert.deepEqual(manifests.docs.map((d) => d.kind).sort(), [
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'Service',
    ]);
  });

  test('every manifest passes the Kubernetes schema and the cross-references hold', () => {
    assert.deepEqual(problems(manifests), []);
  });

  test('a broken manifest fails: a misspelled required field, a wrong type, a port name no container has', () => {
    const original = readFileSync(new URL('deployment.yaml', dir), 'utf8');
    const broken = (from: string, to: string) => {
      assert.ok(original.includes(from), from);
      return problems(readManifests({ 'deployment.yaml': original.replace(from, to) }));
    };
    assert.match(broken('      containers:\n', '      contaners:\n').join('\n'), /containers/);
    assert.match(broken('replicas: 3', 'replicas: three').join('\n'), /replicas/);
    assert.match(
      broken(
        '              path: /readyz\n              port: http',
        '              path: /readyz\n              port: htp',
      ).join('\n'),
      /readiness probe's port "htp" is no container port's name/,
    );
    assert.match(
      broken('- name: tmp\n          emptyDir', '- name: scratch\n          emptyDir').join('\n'),
      /names no volume "tmp"/,
    );
  });

  test('every variable the manifests set is one Patron reads, and Secrets hold the secrets', () => {
    const names = envNames(manifests);
    assert.ok(names.includes('DATABASE_URL') && names.includes('PATRON_MASTER_KEY'), names.join(' '));
    const unknown = names.filter((n) => (n.startsWith('PATRON_') ? !KNOWN_SETTINGS.includes(n) : !readByConfig(n)));
    assert.deepEqual(unknown, [], 'variables Patron does not read');
    assert.equal(readByConfig('NO_SUCH_VARIABLE'), false);
    const secret = new Set(['DATABASE_URL', 'PATRON_MASTER_KEY', 'PATRON_SIGNER_PRIVATE_KEY', 'PATRON_CHAINS']);
    for (const { doc } of of(manifests, 'Deployment')) {
      for (const c of deployment.parse(doc).spec.template.spec.containers) {
        for (const e of c.env.filter((x) => secret.has(x.name))) {
          assert.equal(e.value, undefined, `${e.name} must come from a Secret, not a literal`);
          assert.equal(e.valueFrom?.secretKeyRef?.key, e.name);
        }
      }
    }
  });
});
