import ipaddr from 'ipaddr.js';
import { type HostResolver, isPublicAddress } from '../webhooks/webhookUrlPolicy.js';

/**
 * The start-up check of each operator alert URL (PATRON_ALERT_WEBHOOK_URL, PATRON_ALERTMANAGER_URL,
 * PATRON_ALERT_SLACK_WEBHOOK_URL, PATRON_ALERT_PAGERDUTY_URL; the config has parsed them):
 * its host must resolve, once, now. Why refuse rather than warn: the alerts are what tells the operator of an outage,
 * and a URL whose every delivery fails (a typo, a name that only exists in another network) was found out only by
 * the outage it should have announced. A private or loopback address is fine: the URL is the operator's
 * (alertWebhook.ts); the answer says so for the start-up log.
 */
export interface AlertDestination {
  readonly host: string;
  readonly addresses: readonly string[];
  /** Whether any address is loopback, private, link-local or otherwise not public (allowed for this URL alone). */
  readonly internal: boolean;
}

export async function checkAlertDestination(args: {
  readonly url: string;
  readonly resolve: HostResolver;
  /** The setting the URL came from, for the problem (never the URL: Slack's is a credential). */
  readonly setting?: string;
}): Promise<
  { readonly ok: true; readonly destination: AlertDestination } | { readonly ok: false; readonly problem: string }
> {
  const setting = args.setting ?? 'PATRON_ALERT_WEBHOOK_URL';
  const url = URL.canParse(args.url) ? new URL(args.url) : undefined;
  if (url === undefined) return { ok: false, problem: `${setting} is not a URL` };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await args.resolve(host);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return {
        ok: false,
        problem: `${setting}: its host ${host} does not resolve (${reason}); fix the URL or the DNS, or unset it to send no alerts`,
      };
    }
    if (addresses.length === 0) {
      return { ok: false, problem: `${setting}: its host ${host} resolves to no address` };
    }
  }
  return { ok: true, destination: { host, addresses, internal: !addresses.every(isPublicAddress) } };
}

/** Every operator alert URL the configuration sets, with the setting it came from (what main.ts checks at start). */
export function alertUrls(config: {
  readonly solvency: { readonly alert: { readonly url: string } | undefined };
  readonly alerts: {
    readonly alertmanager: { readonly url: string } | undefined;
    readonly slack: { readonly url: string } | undefined;
    readonly pagerDuty: { readonly url: string } | undefined;
  };
}): { readonly setting: string; readonly url: string }[] {
  const urls = [
    { setting: 'PATRON_ALERT_WEBHOOK_URL', url: config.solvency.alert?.url },
    { setting: 'PATRON_ALERTMANAGER_URL', url: config.alerts.alertmanager?.url },
    { setting: 'PATRON_ALERT_SLACK_WEBHOOK_URL', url: config.alerts.slack?.url },
    // Its default (PagerDuty's own) too: a machine that cannot resolve it would page nobody.
    { setting: 'PATRON_ALERT_PAGERDUTY_URL', url: config.alerts.pagerDuty?.url },
  ];
  return urls.flatMap(({ setting, url }) => (url === undefined ? [] : [{ setting, url }]));
}
