// The catalog's dashboard routes under /dashboard-api/ (a session cookie, not an API key).
import * as rq from './requests.ts';
import * as ds from './dashboard-shapes.ts';
import * as rs from './shapes.ts';
import { created, ok, type HttpMethod, type Operation, type OperationError } from './operation.ts';

function dashboard(
  method: HttpMethod,
  path: string,
  summary: string,
  auth: 'session' | 'csrf' | 'sign_in',
  rest: Pick<Operation, 'success' | 'errors'> & Partial<Operation>,
): Operation {
  return {
    method,
    path: `/dashboard-api${path}`,
    tag: 'Dashboard',
    summary,
    auth: auth === 'sign_in' ? 'sign_in' : 'session',
    ...(auth === 'csrf' ? { csrf: true } : {}),
    extension: 'The dashboard’s own route (a session cookie, not an API key), under `/dashboard-api`.',
    ...rest,
  };
}

export function dashboardOperations(): Operation[] {
  // A session whose team's access is off, or an admin-only route for a member.
  const TEAM_ERRORS: OperationError[] = ['invalid_permission', 'team_access_disabled'];
  const signedIn = (description: string) => ({
    ...created(ds.DashboardSession),
    description,
    headers: { 'set-cookie': 'The session cookie, `__Host-postline_session`.' },
  });
  return [
    dashboard('post', '/session', 'Sign in', 'sign_in', {
      body: { schema: rq.SignInBody, required: true },
      success: signedIn('Signed in: the session.'),
      // 403: not a member of the team asked for; 429: too many attempts from the address or for the account.
      errors: [
        'validation_error',
        'missing_required_field',
        'invalid_credentials',
        'invalid_permission',
        'rate_limit_exceeded',
      ],
    }),
    dashboard('get', '/session', 'Retrieve the session (and its CSRF token)', 'session', {
      success: ok(ds.DashboardSession),
      errors: [],
    }),
    dashboard('delete', '/session', 'Sign out', 'csrf', {
      success: { ...ok(rs.deleted('session')), headers: { 'set-cookie': 'Clears the session cookie.' } },
      errors: [],
    }),
    dashboard('put', '/session/team', 'Switch the team the session acts on', 'csrf', {
      body: { schema: rq.SwitchTeamBody, required: true },
      success: ok(ds.DashboardSession),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
    dashboard('get', '/sessions', "List the user's live sessions", 'csrf', {
      success: ok(ds.DashboardSessionList),
      errors: [],
    }),
    dashboard('delete', '/sessions/{session_id}', "Revoke one of the user's sessions", 'csrf', {
      success: ok(rs.deleted('session')),
      errors: ['not_found'],
    }),
    dashboard('put', '/password', 'Change the password (and revoke every other session)', 'csrf', {
      body: { schema: rq.ChangePasswordBody, required: true },
      success: ok(rs.ref('user')),
      errors: ['validation_error', 'missing_required_field', 'invalid_credentials'],
    }),
    dashboard('get', '/setup', "Check the first account's setup link", 'sign_in', {
      query: rq.LinkTokenQuery,
      success: ok(ds.SetupLink),
      errors: ['not_found'],
    }),
    dashboard('post', '/setup', 'Create the first user and team', 'sign_in', {
      body: { schema: rq.SetupBody, required: true },
      success: signedIn('The first account: signed in.'),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
    dashboard('get', '/audit-log', "List the team's audit log", 'csrf', {
      query: rq.PaginationQuery.safeExtend(rq.AuditLogQuery.shape),
      success: ok(ds.AuditLogList),
      errors: ['validation_error', ...TEAM_ERRORS],
    }),
    dashboard('get', '/team', 'Retrieve the team the session acts on', 'csrf', {
      success: ok(ds.DashboardTeam),
      errors: TEAM_ERRORS,
    }),
    dashboard('get', '/members', "List the team's members (admins)", 'csrf', {
      success: ok(ds.MemberList),
      errors: TEAM_ERRORS,
    }),
    dashboard('patch', '/members/{user_id}', "Change a member's role (admins)", 'csrf', {
      body: { schema: rq.UpdateMemberBody, required: true },
      success: ok(ds.UpdatedMember),
      // 422 also when the team would be left without an admin.
      errors: ['not_found', 'validation_error', 'missing_required_field', ...TEAM_ERRORS],
    }),
    dashboard('delete', '/members/{user_id}', 'Remove a member (admins)', 'csrf', {
      success: ok(rs.deleted('member')),
      errors: ['not_found', 'validation_error', ...TEAM_ERRORS],
    }),
    dashboard('get', '/invites', "List the team's pending invites (admins)", 'csrf', {
      success: ok(ds.InviteList),
      errors: TEAM_ERRORS,
    }),
    dashboard('post', '/invites', 'Invite someone to the team (admins)', 'csrf', {
      body: { schema: rq.CreateInviteBody, required: true },
      success: created(ds.CreatedInvite),
      errors: ['validation_error', 'missing_required_field', ...TEAM_ERRORS],
    }),
    dashboard('get', '/invites/accept', 'Check an invite link', 'sign_in', {
      query: rq.LinkTokenQuery,
      success: ok(ds.InviteLink),
      errors: ['not_found'],
    }),
    dashboard('post', '/invites/accept', 'Accept an invite (and sign in)', 'sign_in', {
      body: { schema: rq.AcceptInviteBody, required: true },
      success: signedIn('Joined the team: signed in on it.'),
      errors: ['validation_error', 'missing_required_field', 'invalid_credentials', 'not_found'],
    }),
    dashboard('delete', '/invites/{invite_id}', 'Revoke an invite (admins)', 'csrf', {
      success: ok(rs.deleted('invite')),
      errors: ['not_found', ...TEAM_ERRORS],
    }),
    dashboard('post', '/password-resets', "Make a member's password-reset link (admins)", 'csrf', {
      body: { schema: rq.CreatePasswordResetBody, required: true },
      success: created(ds.CreatedPasswordReset),
      errors: ['validation_error', 'missing_required_field', 'not_found', ...TEAM_ERRORS],
    }),
    dashboard('post', '/password-resets/request', 'Ask for a password-reset link by email', 'sign_in', {
      body: { schema: rq.RequestPasswordResetBody, required: true },
      success: {
        status: 202,
        schema: ds.PasswordResetRequest,
        description: 'Accepted: the link is emailed when an account has the address and email is configured.',
      },
      errors: ['validation_error', 'missing_required_field', 'rate_limit_exceeded'],
    }),
    dashboard('post', '/password-resets/complete', 'Set a new password with a reset link', 'sign_in', {
      body: { schema: rq.CompletePasswordResetBody, required: true },
      success: ok(rs.ref('user')),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
  ];
}
