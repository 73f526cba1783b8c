import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The layering of src/ (docs/development.md, "Layers"): the table there names every folder and top-level file of
 * src/ in one layer; a source file (tests aside) imports only from its own layer or below, and no files import each
 * other in a circle, type-only imports included. Read from the files themselves: the docs' table and every relative
 * import of every source file.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** `name/` or `name.ts` of each row's last cell, by layer number. */
function layersFromDocs(): Map<string, number> {
  const doc = readFileSync(join(root, 'docs/development.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Layers'));
  const layers = new Map<string, number>();
  for (const line of section.split('\n')) {
    const row = /^\| (\d+) \|[^|]*\| (.*) \|$/.exec(line);
    if (row === null) continue;
    for (const [, name] of (row[2] ?? '').matchAll(/`([^`]+)`/g)) {
      assert.ok(name !== undefined);
      assert.ok(!layers.has(name), `${name} stands in two layers of docs/development.md`);
      layers.set(name, Number(row[1]));
    }
  }
  return layers;
}

/** Every .ts file under `dir` but tests. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** A file's own entry in the table: its top-level folder (`store/`) or itself (`deps.ts`). */
function entryOf(file: string): string {
  const [first, ...rest] = relative(src, file).split(/[\\/]/);
  return rest.length === 0 ? (first ?? '') : `${first}/`;
}

// import … from '…', export … from '…', import '…', import('…'): the relative ones, each a file of src/.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** What each source file imports of src/, as absolute paths of .ts files. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const [, spec] of text.matchAll(SPECIFIER)) {
      if (spec === undefined) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (known.has(target)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The graph's strongly connected components of more than one file (Tarjan), or a file importing itself. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the layers of src/ (docs/development.md, "Layers")', () => {
  const layers = layersFromDocs();
  const files = sourceFiles(src);
  const graph = importGraph(files);
  const name = (f: string) => relative(root, f);

  test('the table names every folder and top-level file of src/, and nothing else', () => {
    const entries = readdirSync(src)
      .filter((e) => statSync(join(src, e)).isDirectory() || (e.endsWith('.ts') && !e.endsWith('.test.ts')))
      .map((e) => (statSync(join(src, e)).isDirectory() ? `${e}/` : e))
      .sort();
    assert.deepEqual([...layers.keys()].sort(), entries);
  });

  test('the import graph was read (over 300 files, over 1,000 imports)', () => {
    // A scanner that read nothing would pass the next two tests: hold it to the graph's size.
    const edges = [...graph.values()].reduce((n, targets) => n + targets.length, 0);
    assert.ok(files.length > 300 && edges > 1000, `${files.length} files, ${edges} imports`);
  });

  test('no import runs up a layer', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = layers.get(entryOf(file));
      assert.ok(from !== undefined, `${name(file)}: its folder is in no layer`);
      for (const target of targets) {
        const to = layers.get(entryOf(target));
        assert.ok(to !== undefined, `${name(target)}: its folder is in no layer`);
        if (to > from) upward.push(`${name(file)} (layer ${from}) imports ${name(target)} (layer ${to})`);
      }
    }
    assert.deepEqual(upward, []);
  });

  test('no files import each other in a circle', () => {
    assert.deepEqual(
      circles(graph).map((c) => c.map(name).sort()),
      [],
    );
  });

  test('src/README.md names every folder of src/', () => {
    const readme = readFileSync(join(src, 'README.md'), 'utf8');
    const missing = [...layers.keys()].filter((e) => e.endsWith('/') && !readme.includes(`\`${e}\``));
    assert.deepEqual(missing, []);
  });
});
