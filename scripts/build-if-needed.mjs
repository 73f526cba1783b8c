// `npm start`'s build step: runs `npm run build` only when an input changed since the last build (see
// buildStamp.mjs), then records the inputs' digest in dist/.build-stamp.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isBuildCurrent, writeBuildStamp } from './buildStamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const stampFile = fileURLToPath(new URL('../dist/.build-stamp', import.meta.url));
const outputs = ['dist/main.js', 'build/contracts/PatronPaymaster.json'];

if (!isBuildCurrent({ root, stampFile, outputs })) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  writeBuildStamp({ root, stampFile });
}
