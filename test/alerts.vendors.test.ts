import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { createPatronMetrics } from '../src/metrics/patronMetrics.js';
import type { AlertFanOut } from '../src/solvency/alerts/alertFanOut.js';
import { buildAlertSender } from '../src/solvency/alerts/buildAlertSender.js';
import { testConfig } from './helpers/testContext.js';
import { answer, type Receiver, type ReceiverHandler, startReceiver } from './helpers/webhookReceiver.js';

/**
 * The operator alerts to a Slack-compatible incoming webhook and to PagerDuty's Events API v2, each received by a
 * real HTTP server on 127.0.0.1 that checks the body against the vendor's published rules (the schemas below, written
 * from Slack's "Sending messages using incoming webhooks" with Block Kit's limits, and PagerDuty's "Send an Alert
 * Event") and answers as the vendor does: Slack 200 `ok` (400 `invalid_payload`), PagerDuty 202
 * `{status: "success"}` (400 `{status: "invalid event"}`).
 */
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const SLACK_PATH = '/services/T000SECRET/B000SECRET/XXXXXXXXXXXXXXXXSECRET';
const PAYMASTER = '0x00000000000000000000000000000000000A11CE';

const text = (max: number) =>
  z.object({ type: z.enum(['plain_text', 'mrkdwn']), text: z.string().min(1).max(max), emoji: z.boolean().optional() });
const slackBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('header'), text: text(150).extend({ type: z.literal('plain_text') }) }),
  z
    .object({ type: z.literal('section'), text: text(3000).optional(), fields: z.array(text(2000)).max(10).optional() })
    .refine((b) => b.text !== undefined || b.fields !== undefined, 'a section needs text or fields'),
  z.object({ type: z.literal('context'), elements: z.array(text(3000)).min(1).max(10) }),
  z.object({ type: z.literal('divider') }),
]);
/** An incoming webhook's message: `text`, required unless blocks are given (then the notification's fallback). */
const slackMessage = z
  .object({ text: z.string().max(40_000).optional(), blocks: z.array(slackBlock).max(50).optional() })
  .refine((m) => (m.text ?? '') !== '' || (m.blocks?.length ?? 0) > 0, 'no_text');

const pdSeverity = z.enum(['critical', 'error', 'warning', 'info']);
/** Events API v2 alert events (trigger, and acknowledge/resolve, which need only the key and the dedup key). */
const pagerDutyEvent = z.discriminatedUnion('event_action', [
  z.object({
    routing_key: z.string().length(32),
    event_action: z.literal('trigger'),
    dedup_key: z.string().min(1).max(255).optional(),
    client: z.string().optional(),
    client_url: z.url().optional(),
    payload: z.object({
      summary: z.string().min(1).max(1024),
      source: z.string().min(1),
      severity: pdSeverity,
      timestamp: z.iso.datetime({ offset: true }).optional(),
      component: z.string().optional(),
      group: z.string().optional(),
      class: z.string().optional(),
      custom_details: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
  z.object({
    routing_key: z.string().length(32),
    event_action: z.enum(['acknowledge', 'resolve']),
    dedup_key: z.string().min(1).max(255),
  }),
]);

type PagerDutyEvent = z.infer<typeof pagerDutyEvent>;

const asSlack: ReceiverHandler = (req, res) => {
  const parsed = req.url === SLACK_PATH ? slackMessage.safeParse(safeJson(req.body)) : undefined;
  if (parsed === undefined) return answer('no_service', 404, 'text/html')(req, res);
  return parsed.success
    ? answer('ok', 200, 'text/html')(req, res)
    : answer('invalid_payload', 400, 'text/html')(req, res);
};

const asPagerDuty: ReceiverHandler = (req, res) => {
  const parsed = pagerDutyEvent.safeParse(safeJson(req.body));
  if (!parsed.success) {
    return answer(
      {
        status: 'invalid event',
        message: 'Event object is invalid',
        errors: parsed.error.issues.map((i) => i.message),
      },
      400,
    )(req, res);
  }
  return answer({ status: 'success', message: 'Event processed', dedup_key: parsed.data.dedup_key }, 202)(req, res);
};

function safeJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

describe('operator alerts to Slack and PagerDuty', () => {
  let slack: Receiver;
  let pagerDuty: Receiver;
  let sender: AlertFanOut;
  const logged: string[] = [];
  const logger = {
    info: (o: object, m: string) => logged.push(JSON.stringify({ ...o, m })),
    warn: (o: object, m: string) => logged.push(JSON.stringify({ ...o, m })),
  };
  before(async () => {
    slack = await startReceiver(asSlack);
    pagerDuty = await startReceiver(asPagerDuty);
    const built = buildAlertSender({
      config: {
        ...testConfig(),
        publicUrl: 'https://patron.example.com',
        alerts: {
          alertmanager: undefined,
          slack: { url: slack.url(SLACK_PATH) },
          pagerDuty: { routingKey: ROUTING_KEY, url: pagerDuty.url('/v2/enqueue') },
        },
      },
      claims: undefined,
      logger,
      now: Date.now,
      retry: { retries: 2, backoffMs: 5 },
    });
    assert.ok(built !== undefined);
    sender = built;
  });
  after(async () => {
    sender?.close();
    await slack?.close();
    await pagerDuty?.close();
  });

  const events = () => pagerDuty.requests.map((r) => pagerDutyEvent.parse(JSON.parse(r.body)) as PagerDutyEvent);

  test('halted then recovered: one Slack message each; a PagerDuty trigger and the resolve under one dedup_key', async () => {
    const data = { chainId: 8453, paymaster: PAYMASTER, depositWei: '1', requiredWei: '2' };
    assert.equal(await sender.send({ type: 'paymaster.solvency.halted', data }), true);
    assert.equal(await sender.send({ type: 'paymaster.solvency.recovered', data }), true);
    assert.deepEqual(
      slack.requests.map((r) => r.url),
      [SLACK_PATH, SLACK_PATH],
    );
    const [firing, resolved] = slack.requests.map((r) => slackMessage.parse(JSON.parse(r.body)));
    assert.match(
      firing?.text ?? '',
      /^:rotating_light: CRITICAL: paymaster\.solvency\.halted: Signing halted for paymaster 0x0+a11ce on chain 8453/,
    );
    assert.match(resolved?.text ?? '', /RESOLVED: paymaster\.solvency\.recovered/);
    const [trigger, resolve] = events();
    assert.equal(trigger?.event_action, 'trigger');
    assert.equal(resolve?.event_action, 'resolve');
    assert.equal(trigger?.dedup_key, `patron:paymaster.solvency:8453:${PAYMASTER.toLowerCase()}`);
    assert.equal(resolve?.dedup_key, trigger?.dedup_key);
    if (trigger?.event_action !== 'trigger') throw new Error('a trigger');
    assert.equal(trigger.payload.severity, 'critical');
    assert.equal(trigger.payload.source, 'patron.example.com');
    assert.deepEqual(trigger.payload.custom_details, data);
    assert.equal(trigger.client_url, 'https://patron.example.com/dashboard/');
  });

  test('any type, a long summary clipped to 1,024, markup escaped; a silent clear resolves PagerDuty, skips Slack', async () => {
    slack.requests.length = 0;
    pagerDuty.requests.length = 0;
    const about = { chainId: 10, paymaster: PAYMASTER };
    await sender.send({
      type: 'paymaster.deposit.topped_up',
      data: { ...about, summary: `<@here> ${'x'.repeat(2000)}` },
    });
    await sender.send({ type: 'paymaster.solvency.ok', data: about, silent: true });
    assert.equal(slack.requests.length, 1, 'no Slack message for the silent clear');
    const message = slackMessage.parse(JSON.parse(slack.requests[0]?.body ?? ''));
    assert.ok(JSON.stringify(message.blocks).includes('&lt;@here&gt;'), 'no mention smuggled in through the data');
    assert.ok(!(slack.requests[0]?.body ?? '').includes('<@here>'), 'escaped in `text` too');
    const [topUp, clear] = events();
    if (topUp?.event_action !== 'trigger') throw new Error('a trigger');
    assert.equal(topUp.payload.summary.length, 1024);
    assert.equal(topUp.payload.severity, 'info');
    assert.equal(clear?.event_action, 'resolve');
    assert.equal(clear?.dedup_key, `patron:paymaster.solvency:10:${PAYMASTER.toLowerCase()}`);
  });

  test('a destination that keeps failing: retried, then failed, counted per destination; the other still delivers', async () => {
    slack.handler = answer('internal_error', 500, 'text/html');
    try {
      const delivered = await sender.send({
        type: 'paymaster.signer.removed',
        data: { chainId: 1, paymaster: PAYMASTER },
      });
      assert.equal(delivered, false);
    } finally {
      slack.handler = asSlack;
    }
    const metrics = createPatronMetrics({
      chainIds: [1],
      alertDeliveries: () => sender.deliveries(),
      processMetrics: false,
    });
    const body = (await metrics.render()).body;
    assert.match(body, /^patron_alert_deliveries_total\{destination="slack",outcome="retried"\} 2$/m);
    assert.match(body, /^patron_alert_deliveries_total\{destination="slack",outcome="failed"\} 1$/m);
    assert.match(body, /^patron_alert_deliveries_total\{destination="slack",outcome="delivered"\} 3$/m);
    assert.match(body, /^patron_alert_deliveries_total\{destination="pagerduty",outcome="delivered"\} 5$/m);
    // Present at 0 before any failure: Prometheus sees the first one as an increase (PatronAlertDeliveryFailing).
    assert.match(body, /^patron_alert_deliveries_total\{destination="pagerduty",outcome="failed"\} 0$/m);
    // The Slack URL's path and the routing key are credentials: in no log line.
    assert.ok(logged.some((l) => l.includes('"destination":"slack"') && l.includes('operator alert refused')));
    assert.ok(!logged.some((l) => l.includes('SECRET') || l.includes(ROUTING_KEY)), logged.join('\n'));
  });

  test('a body PagerDuty refuses (400) is not retried: counted failed at once', async () => {
    pagerDuty.handler = answer({ status: 'invalid event', message: 'Event object is invalid', errors: [] }, 400);
    const before = pagerDuty.requests.length;
    try {
      await sender.send({ type: 'paymaster.solvency.low', data: { chainId: 2, paymaster: PAYMASTER } });
    } finally {
      pagerDuty.handler = asPagerDuty;
    }
    assert.equal(pagerDuty.requests.length - before, 1);
    assert.deepEqual(
      sender.deliveries().find((d) => d.destination === 'pagerduty' && d.outcome === 'failed'),
      { destination: 'pagerduty', outcome: 'failed', count: 1 },
    );
  });
});
