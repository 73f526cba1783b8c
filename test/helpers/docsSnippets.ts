import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The fenced code blocks of README.md and docs/ (test/docs.snippets.test.ts runs them), and the headings and
 * links of those files (test/docs.reference.test.ts checks every link). The convention is docs/README.md's
 * "Code blocks": a block's info string is its language, then attributes, `key=value`, `key="a value"` or a
 * bare `flag`.
 */

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CodeBlock {
  /** The file, relative to the repository root. */
  readonly file: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  /** The info string's first word ('' for a bare fence). */
  readonly lang: string;
  readonly attrs: Readonly<Record<string, string | true>>;
  readonly code: string;
}

/** README.md and every Markdown file under docs/, in a fixed order (README first, then by path). */
export function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
    );
  return ['README.md', ...walk('docs').sort()];
}

/** `sh no-run reason="needs a real chain"` → lang `sh`, attrs `{no-run: true, reason: 'needs a real chain'}`. */
export function parseInfo(info: string): { lang: string; attrs: Record<string, string | true> } {
  const [lang = '', ...rest] = [...info.matchAll(/[^\s"=]+(?:="[^"]*"|=\S+)?/g)].map((m) => m[0]);
  const attrs: Record<string, string | true> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) attrs[part] = true;
    else attrs[part.slice(0, eq)] = part.slice(eq + 1).replace(/^"(.*)"$/, '$1');
  }
  return { lang, attrs };
}

/** Every fenced block of one Markdown file; an unclosed fence is an error naming its line. */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const fence = open[1] ?? '```';
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === fence);
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block is never closed`);
    blocks.push({ file, line: i + 1, ...parseInfo((open[2] ?? '').trim()), code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The file's text with its code blocks blanked (links and headings are read outside them only). */
export function prose(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8').replace(/^(`{3,}).*\n[\s\S]*?^\1\s*$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(file).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (m[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link `[text](target)` outside code blocks and inline code: the target as written. */
export function relativeLinks(file: string): string[] {
  const text = prose(file).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((t) => !/^[a-z]+:/.test(t) && !t.startsWith('mailto:'));
}
