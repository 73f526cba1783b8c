/**
 * Every PATRON_* variable Patron reads, the service's and the CLI's (held to the source by knownSettings.test.ts: a
 * name the code reads and this list lacks fails it). A PATRON_* variable outside it is refused at start
 * (unknownSettings), with the nearest known name: a typo of a name (the solvency floor's without its `_WEI`) was
 * silently ignored, and the deployment ran on the default it meant to change.
 */
export const KNOWN_SETTINGS: readonly string[] = [
  'PATRON_ALERTMANAGER_URL',
  'PATRON_ALERT_PAGERDUTY_ROUTING_KEY',
  'PATRON_ALERT_PAGERDUTY_URL',
  'PATRON_ALERT_SLACK_WEBHOOK_URL',
  'PATRON_ALERT_WEBHOOK_SECRET',
  'PATRON_ALERT_WEBHOOK_URL',
  'PATRON_ALLOW_PRIVATE_WEBHOOKS',
  'PATRON_BOUND_BASE_FEE_MULTIPLIER',
  'PATRON_BOUND_HOLD_SHARE_PER_CALLER_PERCENT',
  'PATRON_BOUND_HOLD_SHARE_PER_SENDER_PERCENT',
  'PATRON_BOUND_L1_DATA_GAS_PER_BYTE',
  'PATRON_BOUND_MAX_CALL_GAS',
  'PATRON_BOUND_MAX_OP_COST_WEI',
  'PATRON_BOUND_MAX_PRE_VERIFICATION_GAS',
  'PATRON_BOUND_MAX_UNUSED_GAS_PENALTY',
  'PATRON_BOUND_MAX_VERIFICATION_GAS',
  'PATRON_BOUND_MIN_TIP_CAP_WEI',
  'PATRON_BOUND_PRE_VERIFICATION_GAS_MULTIPLIER',
  'PATRON_BOUND_PRE_VERIFICATION_GAS_SLACK',
  'PATRON_BOUND_TIP_MULTIPLIER',
  'PATRON_CACHE_MAX_ENTRIES',
  'PATRON_CACHE_TTL_MS',
  'PATRON_CHAINS',
  'PATRON_DASHBOARD_BASE_PATH',
  'PATRON_DATA_DIR',
  'PATRON_DB_POOL_SIZE',
  'PATRON_DEMO',
  'PATRON_DEMO_OWNER_KEY',
  'PATRON_DEPLOYER_PRIVATE_KEY',
  'PATRON_DEPOSIT_WARNING_ETH',
  'PATRON_DEV_BUNDLER',
  'PATRON_DEV_BUNDLER_PORT',
  'PATRON_DEV_CHAIN',
  'PATRON_DEV_CHAIN_FORK_BLOCK',
  'PATRON_DEV_CHAIN_FORK_HEADERS',
  'PATRON_DEV_CHAIN_FORK_URL',
  'PATRON_EIP7702_DELEGATES',
  'PATRON_MEE_NODES',
  'PATRON_EXPIRY_DEFAULT_SECONDS',
  'PATRON_EXPIRY_MAX_SECONDS',
  'PATRON_FEE_MAX_AGE_SECONDS',
  'PATRON_FEE_REFRESH_MS',
  'PATRON_GATING_CACHE_SECONDS',
  'PATRON_KEEPER',
  'PATRON_KEEPER_FUNDER_KEYSTORE',
  'PATRON_KEEPER_FUNDER_KEYSTORE_PASSWORD',
  'PATRON_KEEPER_FUNDER_KMS_ENDPOINT',
  'PATRON_KEEPER_FUNDER_KMS_KEY_ID',
  'PATRON_KEEPER_FUNDER_KMS_REGION',
  'PATRON_KEEPER_FUNDER_PKCS11_KEY_LABEL',
  'PATRON_KEEPER_FUNDER_PKCS11_MODULE',
  'PATRON_KEEPER_FUNDER_PKCS11_PIN',
  'PATRON_KEEPER_FUNDER_PKCS11_PIN_FILE',
  'PATRON_KEEPER_FUNDER_PKCS11_TOKEN_LABEL',
  'PATRON_KEEPER_FUNDER_PRIVATE_KEY',
  'PATRON_KEEPER_GAS_RESERVE_WEI',
  'PATRON_KEEPER_INTERVAL_SECONDS',
  'PATRON_KEEPER_LOW_FUNDER_TOPUPS',
  'PATRON_KEYSTORE_PASSWORD',
  'PATRON_MASTER_KEY',
  'PATRON_MAX_WEBHOOKS_PER_DAPP',
  'PATRON_MEE_TANK_CHECK_SECONDS',
  'PATRON_MEE_TANK_RUNWAY_FLOOR_SECONDS',
  'PATRON_METRICS',
  'PATRON_METRICS_HOST',
  'PATRON_METRICS_PORT',
  'PATRON_METRICS_TOKEN',
  'PATRON_NEW_MASTER_KEY',
  'PATRON_PASSWORD',
  'PATRON_PRICE_REFRESH_SECONDS',
  'PATRON_PRODUCTION',
  'PATRON_PUBLIC_URL',
  'PATRON_RATE_LIMITS',
  'PATRON_RATE_LIMIT_STORE',
  'PATRON_REQUEST_LOG_MAX_ROWS',
  'PATRON_REQUEST_LOG_RETENTION_DAYS',
  'PATRON_SESSION_IDLE_MINUTES',
  'PATRON_SESSION_MAX_HOURS',
  'PATRON_SETTLEMENT',
  'PATRON_SETTLEMENT_CONFIRMATIONS',
  'PATRON_SETTLEMENT_EXPIRY_GRACE_SECONDS',
  'PATRON_SETTLEMENT_MAX_BLOCK_RANGE',
  'PATRON_SETTLEMENT_POLL_MS',
  'PATRON_SIGNER_CHECK_MS',
  'PATRON_SIGNER_KEYSTORE',
  'PATRON_SIGNER_KEYSTORE_PASSWORD',
  'PATRON_SIGNER_KMS_ENDPOINT',
  'PATRON_SIGNER_KMS_KEY_ID',
  'PATRON_SIGNER_KMS_REGION',
  'PATRON_SIGNER_PKCS11_KEY_LABEL',
  'PATRON_SIGNER_PKCS11_MODULE',
  'PATRON_SIGNER_PKCS11_PIN',
  'PATRON_SIGNER_PKCS11_PIN_FILE',
  'PATRON_SIGNER_PKCS11_SESSIONS',
  'PATRON_SIGNER_PKCS11_TOKEN_LABEL',
  'PATRON_SIGNER_PRIVATE_KEY',
  'PATRON_SOLVENCY',
  'PATRON_SOLVENCY_ALERT_HOLD_SECONDS',
  'PATRON_SOLVENCY_FLOOR_WEI',
  'PATRON_SOLVENCY_INTERVAL_SECONDS',
  'PATRON_SOLVENCY_LOW_WATER_WEI',
  'PATRON_SOLVENCY_MARGIN',
  'PATRON_SOLVENCY_TRACKED_SIGNATURES',
  'PATRON_SPONSORSHIP_TOKEN_MAX_LIFETIME_SECONDS',
  'PATRON_TRUSTED_PROXIES',
  'PATRON_VALID_AFTER_SKEW_SECONDS',
  'PATRON_WEBHOOK_DNS_CACHE_SECONDS',
  'PATRON_WEBHOOK_TIMEOUT_MS',
  'PATRON_WORKERS',
];

/**
 * Named by Patron's docs and tooling but read by neither the service nor the CLI: the docs' shell variable for the
 * service's URL, the test suite's settings. Not refused, so a shell that has them set still starts Patron.
 */
const OUTSIDE_SETTINGS: readonly string[] = ['PATRON_URL'];
const OUTSIDE_PREFIXES: readonly string[] = ['PATRON_TEST_'];

const known = new Set([...KNOWN_SETTINGS, ...OUTSIDE_SETTINGS]);

/** The problems of the PATRON_* names Patron does not know, each with the nearest known name when one is close. */
export function unknownSettings(env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('PATRON_') || known.has(name) || OUTSIDE_PREFIXES.some((p) => name.startsWith(p))) continue;
    const near = nearest(name);
    problems.push(
      `${name} is not a setting Patron knows${near === undefined ? '' : ` (did you mean ${near}?)`}: remove it, or see docs/reference/configuration.md`,
    );
  }
  return problems;
}

/** The known name at the smallest edit distance, if it is close enough to be a typo of it (or it extends it). */
function nearest(name: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const k of KNOWN_SETTINGS) {
    const d = k.startsWith(name) || name.startsWith(k) ? Math.abs(k.length - name.length) / 4 : distance(name, k);
    if (best === undefined || d < best.distance) best = { name: k, distance: d };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(name.length / 5)) ? best.name : undefined;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
