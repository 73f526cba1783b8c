import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors/PatronError.js';
import { parseInput } from '../errors/parseInput.js';
import { isRecordId, type MemberRecord, type MemberRole } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { MemberChangeRefusal } from '../store/tenants/memberRepository.js';
import { type Actor, auditEntry } from './auditEntry.js';
import { generatePassword, hashPassword } from './passwordHash.js';
import { emailSchema, memberRoleSchema } from './schemas.js';

export interface MemberServiceDeps {
  readonly store: Store;
  readonly now: () => number;
}

const LAST_OWNER = 'A team keeps at least one owner: make another member owner first';

/**
 * The people of an account's team (docs/guides/dashboard.md, "Team and roles"). Only an owner reaches these writes
 * (api/routeRoles.ts); each is written with its audit row in one transaction (store/tenants/memberRepository.ts).
 */
export function createMemberService(deps: MemberServiceDeps) {
  const { store, now } = deps;
  const refused = (r: MemberChangeRefusal): never => {
    if (r === 'lastOwner') throw new ConflictError(LAST_OWNER);
    throw new NotFoundError('Member not found');
  };
  const changed = (r: MemberRecord | MemberChangeRefusal): MemberRecord => (typeof r === 'string' ? refused(r) : r);

  return {
    list: (accountId: string) => store.members.list(accountId),

    /**
     * Adds a member to the actor's team with a generated first password, shown in this answer only: the owner hands
     * it over, and the member signs in with it (the operator's `patron account set-password` sets another).
     */
    async add(input: {
      actor: Actor;
      email: unknown;
      role: unknown;
    }): Promise<{ member: MemberRecord; initialPassword: string }> {
      const email = parseInput(emailSchema, input.email);
      const role = parseInput(memberRoleSchema, input.role);
      const initialPassword = generatePassword();
      const passwordHash = await hashPassword(initialPassword);
      const t = now();
      const member: MemberRecord = {
        id: randomUUID(),
        accountId: input.actor.member.accountId,
        email,
        role,
        createdAt: t,
      };
      const added = await store.members.add({
        member,
        audit: auditEntry({
          actor: input.actor,
          action: 'member.add',
          dappId: undefined,
          targetId: member.id,
          before: undefined,
          after: member,
          at: t,
        }),
      });
      if (added === undefined) throw new ConflictError(`A member with email ${email} already exists`);
      await store.sessions.setPasswordHash({ memberId: member.id, passwordHash, now: t });
      return { member, initialPassword };
    },

    async setRole(input: { actor: Actor; memberId: string; role: unknown }): Promise<MemberRecord> {
      const role: MemberRole = parseInput(memberRoleSchema, input.role);
      if (!isRecordId(input.memberId)) throw new NotFoundError('Member not found');
      const t = now();
      return changed(
        await store.members.setRole({
          accountId: input.actor.member.accountId,
          memberId: input.memberId,
          role,
          audit: (before, after) =>
            auditEntry({
              actor: input.actor,
              action: 'member.role',
              dappId: undefined,
              targetId: before.id,
              before,
              after,
              at: t,
            }),
        }),
      );
    },

    /** Removes a member of the actor's team: their auth tokens are revoked and their sessions end with it. */
    async remove(input: { actor: Actor; memberId: string }): Promise<MemberRecord> {
      if (!isRecordId(input.memberId)) throw new NotFoundError('Member not found');
      const t = now();
      return changed(
        await store.members.remove({
          accountId: input.actor.member.accountId,
          memberId: input.memberId,
          now: t,
          audit: (before) =>
            auditEntry({
              actor: input.actor,
              action: 'member.remove',
              dappId: undefined,
              targetId: before.id,
              before,
              after: undefined,
              at: t,
            }),
        }),
      );
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
