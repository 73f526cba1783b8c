import { formatEther } from 'viem';
import type { AlertMessage } from '../alertWebhook.js';

/**
 * What every alert format reads of an operator alert (docs/guides/operations.md, "Alerts"), for ANY type: the
 * solvency guard's and the signer watch's, and types added later (a deposit keeper's `paymaster.deposit.topped_up`)
 * without a change here. A type is `<family>.<state>` (`paymaster.solvency` + `halted`):
 *
 * - `alertname`: `Patron` and the type in PascalCase (`PatronPaymasterSolvencyHalted`).
 * - `resolves`: the state says a condition of the family cleared (`recovered`, `restored`, `resolved`, `ok`,
 *   `cleared`): Alertmanager ends the family's firing alerts, PagerDuty resolves its incident.
 * - `severity` (PagerDuty's scale, which Alertmanager routes on too): `data.severity` when it is one of critical,
 *   error, warning, info; else the table below; else warning. A resolving type is info.
 * - `subject`: what the alert is about: its family with `data.chainId`, `data.paymaster` (or `data.tank`, an MEE gas
 *   tank: it pays as a paymaster does) and `data.signer` when present (`paymaster.solvency:8453:0xabc…`). PagerDuty's dedup key; the cross-instance claim's key. An alert
 *   without chain and paymaster has none: it is posted by every instance, as before.
 * - `summary`: `data.summary` when a string, a sentence for the known types, else the type and what it is about.
 */
export type AlertSeverity = 'critical' | 'error' | 'warning' | 'info';

export interface AlertShape {
  readonly type: string;
  readonly family: string;
  readonly state: string;
  readonly alertname: string;
  readonly severity: AlertSeverity;
  readonly resolves: boolean;
  readonly subject: string | undefined;
  /** chain_id, paymaster, tank and signer as Alertmanager labels, those the data has. */
  readonly about: Readonly<Record<string, string>>;
  readonly summary: string;
  /** Every data field as `key: value` lines. */
  readonly description: string;
}

const SEVERITIES: ReadonlySet<string> = new Set(['critical', 'error', 'warning', 'info']);

/** The documented mapping (docs/guides/operations.md, "Alerts"); types not listed are warnings. */
export const SEVERITY_BY_TYPE: Readonly<Record<string, AlertSeverity>> = {
  'paymaster.solvency.halted': 'critical',
  'paymaster.signer.removed': 'critical',
  'paymaster.solvency.low': 'warning',
  'paymaster.deposit.topped_up': 'info',
};
export const DEFAULT_SEVERITY: AlertSeverity = 'warning';

const RESOLVING_STATES: ReadonlySet<string> = new Set(['recovered', 'restored', 'resolved', 'ok', 'cleared']);

/** PagerDuty's limit on `payload.summary`; Alertmanager and Slack get the same sentence. */
const SUMMARY_MAX = 1024;

export function alertShape(message: AlertMessage): AlertShape {
  const { type, data } = message;
  const dot = type.lastIndexOf('.');
  const family = dot > 0 ? type.slice(0, dot) : type;
  const state = dot > 0 ? type.slice(dot + 1) : type;
  const resolves = RESOLVING_STATES.has(state);
  const about = aboutLabels(data);
  const chainId = about.chain_id;
  const payer = about.paymaster ?? about.tank;
  return {
    type,
    family,
    state,
    alertname: alertnameOf(type),
    resolves,
    severity: resolves ? 'info' : severityOf(type, data),
    subject:
      chainId === undefined || payer === undefined
        ? undefined
        : [family, chainId, payer, ...(about.signer === undefined ? [] : [about.signer])].join(':'),
    about,
    summary: clip(summaryOf(type, data, about), SUMMARY_MAX),
    description: Object.entries(data)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('\n'),
  };
}

/** `paymaster.deposit.topped_up` → `PatronPaymasterDepositToppedUp`. */
export function alertnameOf(type: string): string {
  const words = type.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  return `Patron${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
}

export function severityOf(type: string, data: Readonly<Record<string, unknown>>): AlertSeverity {
  const asked = data.severity;
  if (typeof asked === 'string' && SEVERITIES.has(asked)) return asked as AlertSeverity;
  return SEVERITY_BY_TYPE[type] ?? DEFAULT_SEVERITY;
}

function aboutLabels(data: Readonly<Record<string, unknown>>): Record<string, string> {
  const about: Record<string, string> = {};
  const scalar = (v: unknown) => (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' ? v : null);
  const chainId = scalar(data.chainId);
  if (chainId !== null && String(chainId) !== '') about.chain_id = String(chainId);
  // Addresses lower-cased: the same paymaster is one subject whatever checksum casing a caller used.
  for (const key of ['paymaster', 'tank', 'signer'] as const) {
    const v = data[key];
    if (typeof v === 'string' && v !== '') about[key] = v.toLowerCase();
  }
  return about;
}

function summaryOf(
  type: string,
  data: Readonly<Record<string, unknown>>,
  about: Readonly<Record<string, string>>,
): string {
  if (typeof data.summary === 'string' && data.summary !== '') return data.summary;
  const where = `paymaster ${about.paymaster ?? '?'} on chain ${about.chain_id ?? '?'}`;
  const eth = (key: string) => {
    const v = data[key];
    return typeof v === 'string' && /^-?\d+$/.test(v) ? `${formatEther(BigInt(v))} ETH` : 'unknown';
  };
  const runway = typeof data.runwaySeconds === 'number' ? `, runway to the floor ${data.runwaySeconds} s` : '';
  switch (type) {
    case 'paymaster.solvency.low':
      return `Deposit low for ${where}: headroom ${eth('headroomWei')} under the low-water mark ${eth('lowWaterWei')}${runway}; top it up before signing stops`;
    case 'paymaster.solvency.halted':
      return `Signing halted for ${where}: deposit ${eth('depositWei')} does not cover ${eth('requiredWei')} required`;
    case 'paymaster.solvency.recovered':
      return `Signing resumed for ${where}: deposit ${eth('depositWei')}, back above the low-water mark`;
    case 'paymaster.solvency.ok':
      return `Deposit back above the low-water mark for ${where}`;
    case 'paymaster.signer.removed':
      return `Signer ${about.signer ?? '?'} removed from ${where}: nothing is signed for it`;
    case 'paymaster.signer.restored':
      return `Signer ${about.signer ?? '?'} accepted again by ${where}: signing resumed`;
    default:
      return about.paymaster === undefined ? type : `${type}: ${where}`;
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
