import type { OnCall } from '../rpc/callReport.js';
import type { PatronMetrics } from './patronMetrics.js';

/** The metrics' observer of finished paymaster calls, for the JSON-RPC core's one `onCall` hook (callReport.ts). */
export function metricsOnCall(metrics: Pick<PatronMetrics, 'observeCall'>): OnCall {
  return (report) => metrics.observeCall(report);
}
