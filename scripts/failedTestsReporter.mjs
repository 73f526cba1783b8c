// A second test reporter beside TAP: at the end of the run it repeats every failed test (its file, its name and
// the first lines of its error). CI keeps only the tail of a long log, where TAP's "# fail 1" says that something
// failed but not what; this summary is what lands there.
export default async function* failedTestsReporter(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    // A suite fails when a test inside it does: name the tests, not every suite around them. A suite that failed
    // by itself (a file that threw while loading, inside the runner's per-file describe) is named: TAP's "# fail"
    // counts tests only and says 0 then, although the run exits 1.
    if (details?.type === 'suite' && error?.failureType === 'subtestsFailed') continue;
    const cause = error?.cause ?? error;
    const message = String(cause?.stack ?? cause?.message ?? cause ?? 'failed')
      .split('\n')
      .slice(0, 12)
      .join('\n    ');
    failed.push(`not ok: ${name}${file ? `\n  file: ${file}` : ''}\n    ${message}`);
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed:\n${failed.join('\n')}\n`;
}
