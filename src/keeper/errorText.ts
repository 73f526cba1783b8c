/** A node's or signer's error in one line (viem's short message when there is one), never a stack. */
export function errorText(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'shortMessage' in err && typeof err.shortMessage === 'string') {
    return err.shortMessage;
  }
  return err instanceof Error ? (err.message.split('\n')[0] ?? 'error') : String(err);
}
