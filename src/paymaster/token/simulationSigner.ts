import { randomBytes } from 'node:crypto';
import { type Address, bytesToHex, decodeFunctionResult, encodeFunctionData, type Hex, pad, parseAbi } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { CryptoBackend } from '../../crypto/cryptoBackend.js';
import type { StateDiff } from '../entryPoints/entryPointModule.js';
import { signerPositionSlot } from '../entryPoints/signerSetSlot.js';

/**
 * The key the token mode's simulation signs with, instead of the paymaster's signer: a device signer (a PKCS#11
 * token, AWS KMS) is then asked once per op, for the final data, as in the sponsored mode.
 *
 * Why the simulation needs a signature at all: the paymaster checks its signature before anything of the token
 * mode (the prefund, the context that makes postOp run), and a wrong one fails softly (SIG_VALIDATION_FAILED) with
 * nothing of that run. The ERC-7677 stub's dummy signature is enough to size an op, not to show that its charge is
 * collected, which is what this simulation is for. Why it need not be the signer's: the simulation signs other
 * values than the final data (a 1 wei gas price, a maximum of 1 unit), so it never vouched for the signature that
 * is returned; each device signature is checked by recovery against the signer's public key as it comes back
 * (ecdsaSignature.ts), and whether the paymaster accepts that key is the signer watch's (solvency/signerWatch.ts).
 *
 * The simulation sees this key in the paymaster's signer set through a state override of the one storage slot the
 * check reads (signerSetSlot.ts): the contract's own validation and postOp run unchanged, at the same gas (one cold
 * read of a set slot and one ecrecover, as with the real signer). The key is random per process and in no signer
 * set on any chain, so a signature it makes is worth nothing outside a simulation.
 *
 * Where the override would not be seen (a node that ignores eth_call's state overrides, a paymaster from before
 * signer sets, whose layout differs), a simulation signed by this key would fail the signature softly, and on v0.6
 * the charge probe (nothing owed afterwards) would then pass an op whose charge never ran. So each paymaster is
 * asked first, once: `isSigner(this key)` under the override must answer true. Where it does not, the simulation
 * is signed by the signer, as before this key existed (two signatures per op there), and that is logged.
 */
export interface SimulationSigning {
  sign(digest: Uint8Array): Uint8Array;
  /** `over` (a charge probe's state diff) with this key added to the paymaster's signer set. */
  stateDiff(over: StateDiff | undefined): StateDiff;
}

export interface SimulationSigner {
  readonly address: Address;
  /** This key's signing for the simulations of `chain`'s paymaster, or undefined where they would not accept it. */
  forChain(chain: ChainRuntime): Promise<SimulationSigning | undefined>;
}

/** A non-zero position: the key is "in the set" (its index + 1, here as if it were first). */
const IN_SET = pad('0x01', { size: 32 });
/** A paymaster that did not accept the key is asked again after this long (a node may be fixed, a call may have failed). */
export const SIMULATION_SIGNER_RECHECK_MS = 60_000;
const isSignerAbi = parseAbi(['function isSigner(address signer) view returns (bool)']);

export function createSimulationSigner(args: {
  crypto: CryptoBackend;
  now: () => number;
  logger?: { warn(obj: object, msg: string): void } | undefined;
}): SimulationSigner {
  const { crypto } = args;
  const key = randomBytes(32);
  const address = privateKeyToAddress(bytesToHex(key));
  const slot = signerPositionSlot({ signer: address, keccak: (data) => crypto.keccak256(data) });
  const sign = (digest: Uint8Array) => crypto.signDigest(digest, key);
  /** Per chain and paymaster: whether it accepts the key under the override, and until when a "no" holds. */
  const answers = new Map<string, { accepted: Promise<boolean>; until: number }>();

  /** Whether the paymaster accepts the key under the override, or why it does not (its refusal, the call's error). */
  const accepts = async (chain: ChainRuntime): Promise<true | string> => {
    const data = encodeFunctionData({ abi: isSignerAbi, functionName: 'isSigner', args: [address] });
    const overrides = { [chain.paymaster]: { stateDiff: { [slot]: IN_SET } } };
    try {
      const out = await chain.request({
        method: 'eth_call',
        params: [{ to: chain.paymaster, data }, 'latest', overrides],
      });
      const yes = decodeFunctionResult({ abi: isSignerAbi, functionName: 'isSigner', data: out as Hex });
      return yes || 'isSigner answered false: the node ignores state overrides, or the signer set is elsewhere';
    } catch (err) {
      return err instanceof Error ? (err.message.split('\n')[0] ?? err.name) : String(err);
    }
  };

  return {
    address,
    async forChain(chain) {
      const id = `${chain.chainId}:${chain.paymaster}`;
      let answer = answers.get(id);
      if (answer === undefined || answer.until <= args.now()) {
        // A "yes" holds for the process; a "no" for SIMULATION_SIGNER_RECHECK_MS, logged each time it is given.
        const asked = { accepted: Promise.resolve(false), until: Number.POSITIVE_INFINITY };
        asked.accepted = accepts(chain).then((reason) => {
          if (reason === true) return true;
          asked.until = args.now() + SIMULATION_SIGNER_RECHECK_MS;
          args.logger?.warn(
            { chainId: chain.chainId, paymaster: chain.paymaster, reason },
            'token mode: the paymaster does not accept the simulation key under a state override (a node without eth_call state overrides, or a paymaster from before signer sets); its simulations are signed by the signer, two signatures per op',
          );
          return false;
        });
        answers.set(id, asked);
        answer = asked;
      }
      if (!(await answer.accepted)) return undefined;
      return {
        sign,
        stateDiff: (over) => ({ ...over, [chain.paymaster]: { ...over?.[chain.paymaster], [slot]: IN_SET } }),
      };
    },
  };
}
