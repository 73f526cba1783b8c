import type { AlertShape } from './alertShape.js';

/**
 * An operator alert as a Slack incoming webhook takes it (https://api.slack.com/messaging/webhooks): `text`, the
 * notification's line and the fallback of clients without blocks, and `blocks` (Block Kit: a header, the summary,
 * up to ten of the data's fields, a context line). Mattermost, Rocket.Chat and the like accept the same body.
 */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly SlackBlock[];
}

type Text = { readonly type: 'mrkdwn' | 'plain_text'; readonly text: string };
type SlackBlock =
  | { readonly type: 'header'; readonly text: Text }
  | { readonly type: 'section'; readonly text?: Text; readonly fields?: readonly Text[] }
  | { readonly type: 'context'; readonly elements: readonly Text[] };

/** Block Kit's limits: a header's text, a section's text, a field's text, fields per section. */
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;
const FIELDS_MAX = 10;

const MARK: Record<string, string> = {
  critical: ':rotating_light:',
  error: ':red_circle:',
  warning: ':warning:',
  info: ':white_check_mark:',
};

export function slackMessage(args: {
  readonly shape: AlertShape;
  readonly data: Readonly<Record<string, unknown>>;
  readonly dashboardUrl: string | undefined;
}): SlackMessage {
  const { shape, data } = args;
  const head = `${MARK[shape.severity] ?? ''} ${shape.resolves ? 'RESOLVED' : shape.severity.toUpperCase()}: ${shape.type}`;
  const fields = Object.entries(data)
    .filter(([k]) => k !== 'summary')
    .slice(0, FIELDS_MAX)
    .map(([k, v]) => ({
      type: 'mrkdwn' as const,
      text: clip(`*${mrkdwnEscape(k)}*\n${mrkdwnEscape(typeof v === 'string' ? v : JSON.stringify(v))}`, FIELD_MAX),
    }));
  const link = args.dashboardUrl === undefined ? '' : ` · <${args.dashboardUrl}|dashboard>`;
  return {
    text: clip(`${head}: ${mrkdwnEscape(shape.summary)}`, SECTION_MAX),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: clip(head.trim(), HEADER_MAX) } },
      { type: 'section', text: { type: 'mrkdwn', text: clip(mrkdwnEscape(shape.summary), SECTION_MAX) } },
      ...(fields.length === 0 ? [] : [{ type: 'section' as const, fields }]),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `Patron · \`${mrkdwnEscape(shape.type)}\`${link}` }] },
    ],
  };
}

/** Slack's mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
function mrkdwnEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
