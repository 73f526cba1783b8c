import type { RequestFact } from '../paymaster/requestFacts.js';
import type { RpcErrorObject } from './rpcErrors.js';
import type { MethodOutcome } from './rpcMethod.js';

/**
 * One finished JSON-RPC call on a paymaster endpoint, as its observers (the request log, the metrics) receive it
 * through the one `onCall` hook: who, what, the domain's facts, how long, and how it ended. Called on the request
 * path: an observer does O(1) work here (an append, a counter) and anything heavier later.
 */
export interface CallReport {
  /** Wall-clock ms when the call began. */
  readonly at: number;
  readonly method: string;
  readonly accountId: string;
  readonly dappId: string;
  readonly chainId: number;
  readonly facts: readonly RequestFact[];
  readonly latencyMs: number;
  /** What the method declared its answer to be (absent when the call failed). */
  readonly outcome?: MethodOutcome;
  readonly error?: RpcErrorObject;
}

export type OnCall = (report: CallReport) => void;
