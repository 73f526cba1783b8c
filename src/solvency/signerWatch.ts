import { type Address, getAddress } from 'viem';
import { startPollLoop } from '../async/pollLoop.js';
import { SignerNotAcceptedError } from '../errors/PatronError.js';
import type { AlertSender } from './alertWebhook.js';
import { type PaymasterKey, paymasterKey } from './paymasterKey.js';

/**
 * The signer watch: per paymaster (one per chain and EntryPoint), whether the paymaster still accepts this
 * service's key, asked of the contract (`isSigner`) every `intervalMs`. The start-up check (chain/verifyChains.ts)
 * covers the key at start; this covers the owner removing it later (the last step of a rotation, or a key thought
 * compromised). Once removed, everything Patron would sign for that paymaster fails on chain (AA34), so it stops
 * signing there (`assertActive` refuses with -32043 before any work), logs an error, and posts an operator alert;
 * `patron_signer_accepted` shows it. When the key is added back, signing resumes on the next read.
 *
 * A read that fails keeps the last answer: an RPC hiccup must not stop signing, and a removed key is not trusted
 * again until a read says so. Before the first read the key counts as accepted (start-up verified it).
 */
export interface WatchedPaymaster {
  readonly chainId: number;
  readonly paymaster: Address;
  readonly entryPointVersion: string;
  /** Whether the paymaster accepts the signer now (paymasterSigners.ts isPaymasterSigner); may reject. */
  readonly isAccepted: () => Promise<boolean>;
}

export interface SignerWatchState {
  readonly chainId: number;
  readonly paymaster: Address;
  readonly entryPointVersion: string;
  readonly signer: Address;
  /** The last answer; undefined before the first successful read. */
  readonly accepted: boolean | undefined;
  /** Unix ms of the last successful read. */
  readonly checkedAt: number | undefined;
}

export interface SignerWatch {
  /** Throws SignerNotAcceptedError while the paymaster is known not to accept the key. O(1), on the request path. */
  assertActive(paymaster: { readonly chainId: number; readonly paymaster: Address }): void;
  state(): readonly SignerWatchState[];
  /** Reads every paymaster now (after the round under way, if any). */
  checkNow(): Promise<readonly SignerWatchState[]>;
  /** Stops the reads; alerts in flight are the sender's to finish or drop (its close). */
  close(): Promise<void>;
  /** Resolves once every alert posted so far was delivered or given up. */
  settled(): Promise<void>;
}

interface Watched {
  readonly target: WatchedPaymaster;
  accepted: boolean | undefined;
  checkedAt: number | undefined;
}

export function startSignerWatch(deps: {
  readonly paymasters: readonly WatchedPaymaster[];
  readonly signer: Address;
  readonly intervalMs: number;
  readonly alert: AlertSender | undefined;
  readonly logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  readonly now: () => number;
}): SignerWatch {
  const signer = getAddress(deps.signer);
  const watched = new Map<PaymasterKey, Watched>(
    deps.paymasters.map((target) => [paymasterKey(target), { target, accepted: undefined, checkedAt: undefined }]),
  );
  /** Paymasters known not to accept the key: empty in normal operation, so the request path pays one size check. */
  const refused = new Set<PaymasterKey>();
  const pending = new Set<Promise<boolean>>();
  // One warning per failing streak, not one per interval, for an RPC that stays down.
  const readFailing = new Set<PaymasterKey>();

  const view = (w: Watched): SignerWatchState => ({
    chainId: w.target.chainId,
    paymaster: w.target.paymaster,
    entryPointVersion: w.target.entryPointVersion,
    signer,
    accepted: w.accepted,
    checkedAt: w.checkedAt,
  });

  const post = (type: string, w: Watched) => {
    if (deps.alert === undefined) return;
    const sent = deps.alert.send({
      type,
      data: {
        chainId: w.target.chainId,
        paymaster: w.target.paymaster,
        entryPointVersion: w.target.entryPointVersion,
        signer,
      },
    });
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
  };

  const check = async (key: PaymasterKey, w: Watched): Promise<void> => {
    let accepted: boolean;
    try {
      accepted = await w.target.isAccepted();
    } catch (err) {
      if (!readFailing.has(key)) {
        readFailing.add(key);
        deps.logger.warn(
          { err, chainId: w.target.chainId, paymaster: w.target.paymaster },
          'signer watch: could not read whether the paymaster accepts the signer; the last answer stands',
        );
      }
      return;
    }
    readFailing.delete(key);
    const before = w.accepted;
    w.accepted = accepted;
    w.checkedAt = deps.now();
    const fields = {
      chainId: w.target.chainId,
      paymaster: w.target.paymaster,
      entryPointVersion: w.target.entryPointVersion,
      signer,
    };
    if (!accepted && before !== false) {
      refused.add(key);
      deps.logger.error(
        fields,
        "signer watch: the paymaster no longer accepts this service's signing key; signing for it stopped (add the key again, or start the service with a key the paymaster accepts)",
      );
      post('paymaster.signer.removed', w);
    } else if (accepted && before === false) {
      refused.delete(key);
      deps.logger.warn(fields, 'signer watch: the paymaster accepts the signing key again; signing for it resumed');
      post('paymaster.signer.restored', w);
    }
  };

  // One round at a time, the first at once; a round never rejects (check keeps the last answer on a failed read).
  const loop = startPollLoop({
    intervalMs: deps.intervalMs,
    maxBackoffMs: deps.intervalMs,
    firstDelayMs: 0,
    tick: async () => {
      await Promise.all([...watched].map(([key, w]) => check(key, w)));
      return [...watched.values()].map(view);
    },
    onError: (err) => deps.logger.warn({ err }, 'signer watch: a round failed'),
  });

  return {
    assertActive(p) {
      if (refused.size === 0) return;
      const key = paymasterKey(p);
      if (!refused.has(key)) return;
      throw new SignerNotAcceptedError({ chainId: p.chainId, paymaster: getAddress(p.paymaster), signer });
    },
    state: () => [...watched.values()].map(view),
    checkNow: () => loop.runNow(),
    close: () => loop.stop(),
    async settled() {
      await Promise.allSettled([...pending]);
    },
  };
}
