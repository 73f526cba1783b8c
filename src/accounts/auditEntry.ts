import { randomUUID } from 'node:crypto';
import type { AuditRecord, MemberRecord } from '../store/records.js';
import { auditJson } from './auditRedaction.js';

/** Who makes a change: the member, the auth token when a token made the call, and the request (its log line). */
export interface Actor {
  readonly member: MemberRecord;
  readonly authTokenId: string | undefined;
  readonly requestId: string | undefined;
}

/** One audit row of a change by `actor`, in the actor's account; `before`/`after` are redacted here. */
export function auditEntry(args: {
  actor: Actor;
  action: string;
  dappId: string | undefined;
  targetId: string | undefined;
  before: unknown;
  after: unknown;
  at: number;
}): AuditRecord {
  const { actor } = args;
  return {
    id: randomUUID(),
    accountId: actor.member.accountId,
    dappId: args.dappId ?? null,
    at: args.at,
    memberId: actor.member.id,
    memberEmail: actor.member.email,
    authTokenId: actor.authTokenId ?? null,
    action: args.action,
    targetId: args.targetId ?? null,
    before: auditJson(args.before),
    after: auditJson(args.after),
    requestId: actor.requestId ?? null,
  };
}
