import type { MemberRole } from '../store/records.js';

/**
 * The least role each admin route needs, by operationId, in one table: the server's whole role matrix
 * (docs/guides/dashboard.md, "Team and roles", is written from it). route.ts looks every route with a member
 * behind it (auth `account` or `dappPair`) up here when it is declared, and refuses to start without an entry; the
 * check runs after authentication and before any input is read, answering 403. test/routeRoles.test.ts walks every
 * registered route against this table, both ways.
 *
 * viewer: reads. operator: the day-to-day settings of a dApp (policies, limits, caller restrictions, webhooks,
 * sponsorship tokens, token guarantees, replaying a lifecycle event). owner: everything else: the team, creating
 * dApps, and every secret (a dApp's API key rotation, revealing or rotating a signing secret, setting the
 * lifecycle-event endpoint, whose answer holds its secret). Auth tokens are each
 * member's own, acting with that member's role, so every member manages their own.
 */
export const ROUTE_ROLES: Readonly<Record<string, MemberRole>> = {
  getAccount: 'viewer',
  listAuthTokens: 'viewer',
  createAuthToken: 'viewer',
  revokeAuthToken: 'viewer',
  listDapps: 'viewer',
  createDapp: 'owner',
  getDapp: 'viewer',
  updateDapp: 'operator',
  getDappRestrictions: 'viewer',
  setDappRestrictions: 'operator',
  rotateDappApiKey: 'owner',
  getDappSponsorshipTokens: 'viewer',
  setDappSponsorshipTokens: 'operator',
  getDappTokenGuarantees: 'viewer',
  setDappTokenGuarantees: 'operator',
  listDappWebhooks: 'viewer',
  createDappWebhook: 'operator',
  setDappWebhookActive: 'operator',
  deleteDappWebhook: 'operator',
  rotateDappWebhookSecret: 'owner',
  revealDappWebhookSecret: 'owner',
  testDappWebhook: 'operator',
  listDappPolicies: 'viewer',
  createDappPolicy: 'operator',
  getDappPolicy: 'viewer',
  updateDappPolicy: 'operator',
  deleteDappPolicy: 'operator',
  getDappPolicyUsage: 'viewer',
  getPaymasterStatus: 'viewer',
  // The operator's paymasters, shared by every team, as the status above: read by any member.
  listKeeperTopups: 'viewer',
  listRequestLog: 'viewer',
  getRequestLogStats: 'viewer',
  getDappEventEndpoint: 'viewer',
  // Its answer carries the endpoint's standing signing secret (kept across changes), so it is the owner's, like reveal.
  setDappEventEndpoint: 'owner',
  deleteDappEventEndpoint: 'operator',
  revealDappEventEndpointSecret: 'owner',
  listDappEvents: 'viewer',
  replayDappEvent: 'operator',
  listDappLedger: 'viewer',
  getDappLedgerStats: 'viewer',
  exportDappLedgerCsv: 'viewer',
  // The spec's webhook routes (authToken + apiKey): the token's member acts with their role.
  createWebhook: 'operator',
  getWebhooks: 'viewer',
  updateWebhook: 'operator',
  deleteWebhook: 'operator',
  listMembers: 'viewer',
  addMember: 'owner',
  setMemberRole: 'owner',
  removeMember: 'owner',
  listAuditLog: 'viewer',
  // Gas tanks (issue 35): created by the server operator with the CLI only; a team reads its dApps' tanks, and its
  // operators set the alert threshold and retire a tank (which only stops Patron signing from it).
  listMeeTanks: 'viewer',
  listDappMeeTanks: 'viewer',
  getDappMeeTank: 'viewer',
  setDappMeeTankLowBalance: 'operator',
  retireDappMeeTank: 'operator',
};
