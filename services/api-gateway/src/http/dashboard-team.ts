import type { Request, Response, Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests } from '@postline/contracts';
import {
  ApiError,
  formatTimestamp,
  isUuid,
  newId,
  notFound,
  parseInput,
  randomToken,
  route,
  sha256Hex,
} from '@postline/platform';
import { hashPassword, verifyPassword } from '../accounts/password.ts';
import {
  addMember,
  findUserByEmail,
  insertUser,
  membershipsOf,
  revokeOtherSessions,
  setPassword,
} from '../db/accounts.ts';
import { insertAuditEntry } from '../db/audit.ts';
import {
  acceptInvite,
  findPendingInvite,
  insertInvite,
  insertPasswordReset,
  listMembers,
  listPendingInvites,
  lockMembers,
  removeMember,
  revokeInvite,
  setRole,
  usePasswordReset,
} from '../db/members.ts';
import type { GatewayDb } from '../db/schema.ts';
import type { DashboardMail } from '../owners/dashboard-mail.ts';
import type { SignInLimit } from '../redis/sign-in-limit.ts';
import { checkOrigin, teamAccessOf, tooMany, type CurrentSession } from './session-auth.ts';

/** How long an invite link and a password-reset link stay usable. */
export const INVITE_TTL_MS = 7 * 24 * 3_600_000;
export const PASSWORD_RESET_TTL_MS = 60 * 60_000;

export type TeamRouteDeps = {
  db: Kysely<GatewayDb>;
  publicBaseUrl: string;
  now: () => Date;
  /** The request's session, with its CSRF header checked when `csrf`. */
  session: (req: Request, opts: { csrf: boolean }) => Promise<CurrentSession>;
  /** Signs the user in on that team: the cookie and the 201 session body. */
  start: (req: Request, res: Response, userId: string, teamId: string) => Promise<void>;
  /** Sends invites and reset links by email through Postline, when the operator configured it. */
  mail: DashboardMail | undefined;
  /** The sign-in limits: a reset request counts against its address's sign-in attempts. */
  signIn: SignInLimit;
};

/**
 * A team's members, invites and password resets under /dashboard-api (admins only, but for following a link):
 * roles changed and members removed (never the last admin), invites and resets as single-use, expiring links
 * (random 256-bit tokens stored hashed) that the admin copies and hands over. Each change is in the audit log,
 * written in the same transaction.
 */
export function mountTeamRoutes(router: Router, deps: TeamRouteDeps): void {
  const admin = async (req: Request): Promise<CurrentSession> => {
    const current = await deps.session(req, { csrf: true });
    if (teamAccessOf(current) !== 'admin') {
      throw new ApiError(403, 'invalid_permission', 'Only an admin of this team may manage its members.');
    }
    return current;
  };
  const audit = (
    db: Kysely<GatewayDb>,
    req: Request,
    actor: { teamId: string; userId: string },
    action: string,
    target: { type: string; id: string },
  ) =>
    insertAuditEntry(db, {
      id: newId(),
      team_id: actor.teamId,
      actor_type: 'user',
      actor_id: actor.userId,
      action,
      target_type: target.type,
      target_id: target.id,
      method: req.method,
      endpoint: `${req.baseUrl}${req.path}`.slice(0, 500),
      ip: req.ip ?? null,
      user_agent: req.header('user-agent')?.slice(0, 500) ?? null,
    });
  const deliver = async (to: string, subject: string, lines: string[]) =>
    deps.mail ? deps.mail({ to, subject, text: `${lines.join('\n\n')}\n` }) : false;
  // Links for people open the dashboard's pages, which call the JSON routes below with the token.
  const link = (path: string, token: string) => {
    const url = new URL(path, deps.publicBaseUrl);
    url.searchParams.set('token', token);
    return url.toString();
  };

  route(router, '/members', {
    get: async (req, res) => {
      const current = await admin(req);
      const members = await listMembers(deps.db, current.team_id);
      res.json({
        object: 'list',
        data: members.map((m) => ({ ...m, object: 'member', created_at: formatTimestamp(m.created_at) })),
      });
    },
  });

  // Changes one membership; the team keeps at least one admin.
  const changeMember = async (req: Request, res: Response, change: { role: 'admin' | 'member' } | 'remove') => {
    const current = await admin(req);
    const userId = req.params.id;
    if (!userId || !isUuid(userId)) throw notFound('Member not found');
    await deps.db.transaction().execute(async (trx) => {
      const roles = await lockMembers(trx, current.team_id);
      if (!roles.has(userId)) throw notFound('Member not found');
      const admins = [...roles].filter(([id, role]) => role === 'admin' && id !== userId).length;
      const staysAdmin = change !== 'remove' && change.role === 'admin';
      if (admins === 0 && !staysAdmin) {
        throw new ApiError(422, 'validation_error', 'A team keeps at least one admin.');
      }
      if (change === 'remove') await removeMember(trx, current.team_id, userId);
      else await setRole(trx, current.team_id, userId, change.role);
      const action = change === 'remove' ? 'members.deleted' : 'members.updated';
      await audit(trx, req, { teamId: current.team_id, userId: current.user_id }, action, {
        type: 'members',
        id: userId,
      });
    });
    res.json(
      change === 'remove'
        ? { object: 'member', id: userId, deleted: true }
        : { object: 'member', id: userId, role: change.role },
    );
  };
  route(router, '/members/:id', {
    patch: async (req, res) => changeMember(req, res, parseInput(ApiRequests.UpdateMemberBody, req.body)),
    delete: async (req, res) => changeMember(req, res, 'remove'),
  });

  route(router, '/invites', {
    get: async (req, res) => {
      const current = await admin(req);
      const invites = await listPendingInvites(deps.db, current.team_id, deps.now());
      res.json({
        object: 'list',
        data: invites.map((i) => ({
          object: 'invite',
          id: i.id,
          email: i.email,
          role: i.role,
          created_at: formatTimestamp(i.created_at),
          expires_at: formatTimestamp(i.expires_at),
        })),
      });
    },
    post: async (req, res) => {
      const current = await admin(req);
      const body = parseInput(ApiRequests.CreateInviteBody, req.body);
      const role = body.role ?? 'member';
      const members = await listMembers(deps.db, current.team_id);
      if (members.some((m) => m.email.toLowerCase() === body.email.toLowerCase())) {
        throw new ApiError(422, 'validation_error', 'That address is already a member of this team.');
      }
      const token = randomToken(32);
      const expiresAt = new Date(deps.now().getTime() + INVITE_TTL_MS);
      const invite = await deps.db.transaction().execute(async (trx) => {
        const created = await insertInvite(trx, {
          id: newId(),
          team_id: current.team_id,
          email: body.email,
          role,
          token_hash: sha256Hex(token),
          invited_by: current.user_id,
          expires_at: expiresAt,
        });
        await audit(trx, req, { teamId: current.team_id, userId: current.user_id }, 'invites.created', {
          type: 'invites',
          id: created.id,
        });
        return created;
      });
      const url = link('/dashboard/invite', token);
      const teamName = (await membershipsOf(deps.db, current.user_id)).find(
        (t) => t.team_id === current.team_id,
      )?.team_name;
      const sent = await deliver(invite.email, `You are invited to ${teamName ?? 'a team'} on Postline`, [
        `You are invited to join ${teamName ?? 'a team'} on Postline as ${role}.`,
        `Accept within 7 days: ${url}`,
      ]);
      res.status(201).json({
        object: 'invite',
        id: invite.id,
        email: invite.email,
        role,
        expires_at: formatTimestamp(expiresAt),
        email_sent: sent,
        // Without an email, shown to the admin to copy: the token is not stored and cannot be shown again.
        ...(sent ? {} : { url }),
      });
    },
  });

  route(router, '/invites/accept', {
    get: async (req, res) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      const invite = token ? await findPendingInvite(deps.db, sha256Hex(token), deps.now()) : undefined;
      if (!invite) throw notFound('This invite is not valid: it was used, revoked or it expired.');
      res.json({
        object: 'invite',
        email: invite.email,
        role: invite.role,
        team: { id: invite.team_id, name: invite.team_name },
        existing_user: (await findUserByEmail(deps.db, invite.email)) !== undefined,
      });
    },
    post: async (req, res) => {
      const body = parseInput(ApiRequests.AcceptInviteBody, req.body);
      const now = deps.now();
      const invite = await findPendingInvite(deps.db, sha256Hex(body.token), now);
      if (!invite) throw notFound('This invite is not valid: it was used, revoked or it expired.');
      const existing = await findUserByEmail(deps.db, invite.email);
      let newHash: string | undefined;
      if (existing) {
        // Joining with an account that exists takes its password.
        if (!(await verifyPassword(body.password, existing.password_hash))) {
          throw new ApiError(401, 'invalid_credentials', 'Invalid email or password.');
        }
      } else {
        if (!body.name) throw new ApiError(422, 'missing_required_field', 'Missing `name` field.');
        newHash = await hashPassword(parseInput(ApiRequests.NewAccountPassword, body).password);
      }
      const userId = await deps.db.transaction().execute(async (trx) => {
        if (!(await acceptInvite(trx, invite.id, now))) return undefined;
        const id =
          existing?.id ??
          (await insertUser(trx, { id: newId(), email: invite.email, name: body.name!, password_hash: newHash! })).id;
        if (!(await membershipsOf(trx, id)).some((m) => m.team_id === invite.team_id)) {
          await addMember(trx, invite.team_id, id, invite.role);
        }
        await audit(trx, req, { teamId: invite.team_id, userId: id }, 'members.created', { type: 'members', id });
        return id;
      });
      if (!userId) throw notFound('This invite is not valid: it was used, revoked or it expired.');
      await deps.start(req, res, userId, invite.team_id);
    },
  });

  route(router, '/invites/:id', {
    delete: async (req, res) => {
      const current = await admin(req);
      const id = req.params.id;
      if (!id || !isUuid(id)) throw notFound('Invite not found');
      await deps.db.transaction().execute(async (trx) => {
        if (!(await revokeInvite(trx, current.team_id, id))) throw notFound('Invite not found');
        await audit(trx, req, { teamId: current.team_id, userId: current.user_id }, 'invites.deleted', {
          type: 'invites',
          id,
        });
      });
      res.json({ object: 'invite', id, deleted: true });
    },
  });

  route(router, '/password-resets', {
    post: async (req, res) => {
      const current = await admin(req);
      const { user_id } = parseInput(ApiRequests.CreatePasswordResetBody, req.body);
      if (!isUuid(user_id) || !(await listMembers(deps.db, current.team_id)).some((m) => m.id === user_id)) {
        throw notFound('Member not found');
      }
      const token = randomToken(32);
      const expiresAt = new Date(deps.now().getTime() + PASSWORD_RESET_TTL_MS);
      await deps.db.transaction().execute(async (trx) => {
        await insertPasswordReset(trx, {
          token_hash: sha256Hex(token),
          user_id,
          created_by: current.user_id,
          expires_at: expiresAt,
        });
        await audit(trx, req, { teamId: current.team_id, userId: current.user_id }, 'members.password_reset', {
          type: 'members',
          id: user_id,
        });
      });
      const url = link('/dashboard/reset-password', token);
      const email = (await listMembers(deps.db, current.team_id)).find((m) => m.id === user_id)?.email;
      const sent = email
        ? await deliver(email, 'Reset your Postline password', [
            'An admin of your team made this link to set a new Postline password.',
            `Use it within an hour: ${url}`,
          ])
        : false;
      res.status(201).json({
        object: 'password_reset',
        user_id,
        expires_at: formatTimestamp(expiresAt),
        email_sent: sent,
        ...(sent ? {} : { url }),
      });
    },
  });

  // Self-service: the answer is the same 202, sent before anything is looked up, whether or not an account has
  // the address, so neither its body nor its timing tells. The link is emailed only when the operator configured
  // the dashboard's email; otherwise nothing is sent and an admin makes the link (POST /password-resets).
  route(router, '/password-resets/request', {
    post: async (req, res) => {
      checkOrigin(req, deps.publicBaseUrl);
      const { email } = parseInput(ApiRequests.RequestPasswordResetBody, req.body);
      const waitMs = await deps.signIn.attempt(req.ip ?? 'unknown');
      if (waitMs !== undefined) throw tooMany('Too many requests from this address.', waitMs);
      res.status(202).json({ object: 'password_reset_request' });
      if (!deps.mail) return;
      emailResetLink(email).catch((err: unknown) => req.log.error({ err }, 'password reset email not sent'));
    },
  });
  const emailResetLink = async (email: string): Promise<void> => {
    const user = await findUserByEmail(deps.db, email);
    if (!user || !(await deps.signIn.resetEmail(email))) return;
    const token = randomToken(32);
    await insertPasswordReset(deps.db, {
      token_hash: sha256Hex(token),
      user_id: user.id,
      created_by: user.id,
      expires_at: new Date(deps.now().getTime() + PASSWORD_RESET_TTL_MS),
    });
    await deliver(user.email, 'Reset your Postline password', [
      'Someone (you, we hope) asked to reset your Postline password. If it was not you, ignore this email.',
      `Set a new password within an hour: ${link('/dashboard/reset-password', token)}`,
    ]);
  };

  route(router, '/password-resets/complete', {
    post: async (req, res) => {
      const body = parseInput(ApiRequests.CompletePasswordResetBody, req.body);
      const hash = await hashPassword(body.password);
      const userId = await deps.db.transaction().execute(async (trx) => {
        const id = await usePasswordReset(trx, sha256Hex(body.token), deps.now());
        if (!id) return undefined;
        await setPassword(trx, id, hash);
        // A reset signs the user out everywhere.
        await revokeOtherSessions(trx, id, null);
        return id;
      });
      if (!userId) throw notFound('This reset link is not valid: it was used or it expired.');
      res.json({ object: 'user', id: userId });
    },
  });
}
