/** Where the CLI writes; injected so tests run commands in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** All of standard input (secrets such as a password are read from it, never from argv). */
  readonly readStdin?: () => Promise<string>;
}

/** Prints a result: one JSON object with --json (for scripts), else the human lines. */
export function printResult(io: CliIo, json: boolean, value: Record<string, unknown>, human: string[]): void {
  if (json) io.stdout(`${JSON.stringify(value)}\n`);
  else io.stdout(`${human.join('\n')}\n`);
}

export function table(rows: Record<string, unknown>[], columns: string[]): string[] {
  if (rows.length === 0) return ['(none)'];
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)];
}
