import type { DigestSignature } from '../signer/paymasterSigner.js';
import type { EntryPointModule, PaymasterFields, SignArgs } from './entryPointModule.js';

/** r ‖ s ‖ v of a 32-byte digest: at once from a key in the process, later from a device (PaymasterSigner). */
export type SignDigest = (digest: Uint8Array) => DigestSignature;

/**
 * The paymaster fields signed: the version's digest, the signer's signature, the encoding around it. A local key's
 * signature comes back as bytes and the fields are returned at once (no Promise, no microtask on the hot path); a
 * device's comes back as a Promise and so do the fields.
 */
export function signFields(
  ep: EntryPointModule,
  args: SignArgs & { readonly sign: SignDigest },
): PaymasterFields | Promise<PaymasterFields> {
  const signing = ep.signing(args);
  const signature = args.sign(signing.digest);
  return signature instanceof Uint8Array ? signing.fields(signature) : signature.then((s) => signing.fields(s));
}
