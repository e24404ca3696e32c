// The response bodies of the dashboard's routes under /dashboard-api/.
import { z } from 'zod';
import { ListEnvelope } from '../pagination.ts';
import { Id, NullableString, Timestamp } from './shapes.ts';

const MemberRole = z.enum(['admin', 'member']);
const SessionTeam = z.strictObject({ id: Id, name: z.string(), role: MemberRole, access_enabled: z.boolean() });
export const DashboardSession = z.strictObject({
  object: z.literal('session'),
  id: Id,
  user: z.strictObject({ id: Id, email: z.string(), name: z.string() }).nullable(),
  team: SessionTeam.nullable().describe('The team the session acts on.'),
  teams: z.array(SessionTeam).describe('Every team of the user (the team switcher).'),
  csrf_token: z.string().describe('Sent back in the `x-csrf-token` header of every request made with the session.'),
  created_at: Timestamp,
  expires_at: Timestamp,
});
export const DashboardSessionList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      id: Id,
      current: z.boolean().describe('The session of this request.'),
      ip: NullableString,
      user_agent: NullableString,
      created_at: Timestamp,
      last_seen_at: Timestamp,
      expires_at: Timestamp,
    }),
  ),
});
export const SetupLink = z.strictObject({ object: z.literal('setup'), valid: z.literal(true) });
export const AuditLogList = ListEnvelope(
  z.strictObject({
    object: z.literal('audit_log_entry'),
    id: Id,
    action: z.string().describe('`<family>.<verb>`, such as `api-keys.created`.'),
    actor: z.union([
      z.strictObject({ type: z.literal('user'), id: Id, email: NullableString }),
      z.strictObject({ type: z.literal('api_key'), id: Id, name: NullableString }),
    ]),
    target: z.strictObject({ type: z.string(), id: NullableString }),
    method: z.string(),
    endpoint: z.string(),
    ip: NullableString,
    user_agent: NullableString,
    created_at: Timestamp,
  }),
);
export const MemberList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      object: z.literal('member'),
      id: Id.describe("The user's id."),
      email: z.string(),
      name: z.string(),
      role: MemberRole,
      created_at: Timestamp,
    }),
  ),
});
export const UpdatedMember = z.strictObject({ object: z.literal('member'), id: Id, role: MemberRole });
const LinkShown = {
  email_sent: z.boolean().describe('Whether the link was emailed.'),
  url: z.string().optional().describe('When not emailed: the link, shown once for the admin to hand over.'),
};
export const InviteList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      object: z.literal('invite'),
      id: Id,
      email: z.string(),
      role: MemberRole,
      created_at: Timestamp,
      expires_at: Timestamp,
    }),
  ),
});
export const CreatedInvite = z.strictObject({
  object: z.literal('invite'),
  id: Id,
  email: z.string(),
  role: MemberRole,
  expires_at: Timestamp,
  ...LinkShown,
});
export const InviteLink = z.strictObject({
  object: z.literal('invite'),
  email: z.string(),
  role: MemberRole,
  team: z.strictObject({ id: Id, name: z.string() }),
  existing_user: z.boolean().describe('Whether the address has an account: accepting then takes its password.'),
});
export const CreatedPasswordReset = z.strictObject({
  object: z.literal('password_reset'),
  user_id: Id,
  expires_at: Timestamp,
  ...LinkShown,
});
export const PasswordResetRequest = z
  .strictObject({ object: z.literal('password_reset_request') })
  .describe('The same answer whether or not an account has the address.');
export const DashboardTeam = z.strictObject({
  object: z.literal('team'),
  id: Id,
  name: z.string(),
  role: MemberRole.describe("The session's user's role in the team."),
  access_enabled: z.boolean(),
  rate_limit_per_second: z
    .number()
    .int()
    .nullable()
    .describe('The team’s own limit of API requests per second; null uses the server’s default.'),
  retention_days: z
    .number()
    .int()
    .describe(
      'Days the team’s emails, logs, events and received mail are kept before they are deleted (set by the operator).',
    ),
  created_at: Timestamp,
});
