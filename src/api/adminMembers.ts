import { z } from 'zod';
import type { MemberService } from '../accounts/memberService.js';
import { addMemberInput, setMemberRoleInput } from '../accounts/schemas.js';
import type { MemberRecord } from '../store/records.js';
import { ADMIN_TAG } from './adminAccount.js';
import { idParam } from './adminDapps.js';
import { type RouteDef, route } from './route.js';

/**
 * The team of an account (docs/guides/dashboard.md, "Team and roles"): every member reads it, an owner adds members,
 * changes their roles and removes them. The last owner can be neither demoted nor removed (409). Each change is
 * written with its audit row in one transaction (accounts/memberService.ts).
 */
export const memberView = z.object({
  memberId: z.string(),
  email: z.string(),
  role: z.enum(['owner', 'operator', 'viewer']),
  createdAt: z.string(),
});

export const toMemberView = (m: MemberRecord): z.infer<typeof memberView> => ({
  memberId: m.id,
  email: m.email,
  role: m.role,
  createdAt: new Date(m.createdAt).toISOString(),
});

const memberParams = z.object({ memberId: idParam });
const MEMBER_NOT_FOUND = { '404': "Member not found (another team's member included)" } as const;
const LAST_OWNER = { '409': 'The change would leave the team without an owner' } as const;

export function adminMemberRoutes(deps: { members: MemberService }): RouteDef[] {
  const { members } = deps;
  const common = { auth: 'account', tag: ADMIN_TAG } as const;
  return [
    route({
      ...common,
      method: 'GET',
      path: '/api/admin/members',
      operationId: 'listMembers',
      summary: 'The people of the team and their roles',
      answer: { envelope: 'Members fetched', data: z.array(memberView) },
      handler: async ({ account }) => (await members.list(account.id)).map(toMemberView),
    }),
    route({
      ...common,
      method: 'POST',
      path: '/api/admin/members',
      operationId: 'addMember',
      summary: 'Add a member with a role; their first password is in this response only',
      body: addMemberInput,
      example: { email: 'ops@example.com', role: 'operator' },
      answer: { envelope: 'Member added', data: memberView.extend({ initialPassword: z.string() }) },
      errors: { '400': 'email or role invalid', '409': 'A member (of any team) already has this email' },
      audit: 'inTransaction',
      handler: async ({ actor, body }) => {
        const { member, initialPassword } = await members.add({ actor, email: body.email, role: body.role });
        return { ...toMemberView(member), initialPassword };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      path: '/api/admin/members/:memberId',
      operationId: 'setMemberRole',
      summary: "Change a member's role (the last owner cannot be demoted)",
      params: memberParams,
      body: setMemberRoleInput,
      example: { role: 'viewer' },
      answer: { envelope: 'Member role changed', data: memberView },
      errors: { '400': 'role invalid', ...MEMBER_NOT_FOUND, ...LAST_OWNER },
      audit: 'inTransaction',
      handler: async ({ actor, params, body }) =>
        toMemberView(await members.setRole({ actor, memberId: params.memberId, role: body.role })),
    }),
    route({
      ...common,
      method: 'DELETE',
      path: '/api/admin/members/:memberId',
      operationId: 'removeMember',
      summary: 'Remove a member: their auth tokens are revoked and their sessions end (not the last owner)',
      params: memberParams,
      answer: { envelope: 'Member removed' },
      errors: { ...MEMBER_NOT_FOUND, ...LAST_OWNER },
      audit: 'inTransaction',
      handler: async ({ actor, params }) => {
        await members.remove({ actor, memberId: params.memberId });
        return undefined;
      },
    }),
  ];
}
