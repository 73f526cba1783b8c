import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
// @ts-expect-error: a plain .mjs build script, without type declarations
import { inputsDigest, isBuildCurrent, writeBuildStamp } from '../scripts/buildStamp.mjs';

/** `npm start` skips the build when nothing it reads changed (scripts/build-if-needed.mjs). */
test('the build stamp: current after a build, stale once an input changes or an output is missing', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-stamp-'));
  try {
    const inputs = ['src', 'tsconfig.json'];
    fs.mkdirSync(path.join(root, 'src/sub'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
    fs.writeFileSync(path.join(root, 'src/sub/b.ts'), 'export const b = 2;\n');
    fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
    fs.mkdirSync(path.join(root, 'dist'));
    fs.writeFileSync(path.join(root, 'dist/main.js'), '');
    const args = { root, stampFile: path.join(root, 'dist/.build-stamp'), outputs: ['dist/main.js'], inputs };

    assert.equal(isBuildCurrent(args), false, 'never built');
    writeBuildStamp(args);
    assert.equal(isBuildCurrent(args), true, 'just built');
    assert.equal(inputsDigest(root, inputs), inputsDigest(root, inputs), 'the digest is stable');

    // Touching a source (same content, new mtime) rebuilds; so does a new file.
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(path.join(root, 'src/sub/b.ts'), later, later);
    assert.equal(isBuildCurrent(args), false, 'a touched source');
    writeBuildStamp(args);
    fs.writeFileSync(path.join(root, 'src/c.ts'), 'export const c = 3;\n');
    assert.equal(isBuildCurrent(args), false, 'a new source');
    writeBuildStamp(args);
    fs.writeFileSync(path.join(root, 'tsconfig.json'), '{"compilerOptions":{}}\n');
    assert.equal(isBuildCurrent(args), false, 'a changed config');
    writeBuildStamp(args);
    assert.equal(isBuildCurrent(args), true);
    fs.rmSync(path.join(root, 'dist/main.js'));
    assert.equal(isBuildCurrent(args), false, 'an output is missing');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
