import { PatronError } from '../errors/PatronError.js';

/**
 * Why a quote was not signed, each a stable name in `data.reason` (docs/guides/mee-sponsorship.md, "Refusals"):
 * the sign endpoint answers 400 with `{ errors: [{ code, msg }] }`, which abstractjs shows as its message.
 */
export type MeeRefusal =
  | 'malformed_quote'
  | 'tank_mismatch'
  | 'hash_mismatch'
  | 'root_mismatch'
  | 'payment_op'
  | 'tank_op'
  | 'payment_call'
  | 'node_not_trusted'
  | 'window'
  | 'nonce_unknown'
  | 'nonce_used'
  | 'tank_not_ready';

export class MeeQuoteRefusedError extends PatronError {
  override name = 'MeeQuoteRefusedError' as const;
  readonly reason: MeeRefusal;
  constructor(reason: MeeRefusal, message: string) {
    super('VALIDATION', `Quote refused (${reason}): ${message}`, { data: { reason } });
    this.reason = reason;
  }
}
