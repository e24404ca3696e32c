import express, { Router, type Request, type Response } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, DEFAULT_RETENTION_DAYS } from '@postline/contracts';
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
  anyUserExists,
  findUser,
  findUserByEmail,
  insertSession,
  insertUser,
  listSessions,
  membershipsOf,
  revokeOtherSessions,
  revokeSession,
  setPassword,
  setSessionTeam,
  setupTokenValid,
  useSetupToken,
  type Membership,
} from '../db/accounts.ts';
import { auditLogPage } from './audit-log.ts';
import { mountTeamRoutes } from './dashboard-team.ts';
import type { GatewayDb, Session } from '../db/schema.ts';
import { findTeam, insertTeam } from '../db/teams.ts';
import { csrfTokenOf, sessionCookie, sessionLive } from '../domain/session.ts';
import type { DashboardMail } from '../owners/dashboard-mail.ts';
import type { SignInLimit } from '../redis/sign-in-limit.ts';
import {
  checkCsrf,
  checkOrigin,
  loadSession,
  sessionTokenOf,
  teamAccessOf,
  tooMany,
  type CurrentSession,
  type SessionDeps,
} from './session-auth.ts';

export type DashboardDeps = SessionDeps & {
  db: Kysely<GatewayDb>;
  maxAgeMs: number;
  signIn: SignInLimit;
  mail: DashboardMail | undefined;
};

/**
 * The dashboard's own routes under /dashboard-api (not part of the Resend surface): signing in and out, the
 * session and the team switcher, the user's sessions, the password, and the first account's setup. Every
 * route that acts with a session wants its CSRF header and a matching Origin, except GET /session, which is
 * how the client learns the CSRF token; sign-in and setup, which have no session yet, check the Origin.
 */
export function dashboardRoutes(deps: DashboardDeps): Router {
  const router = Router();
  router.use(express.json({ limit: '16kb' }));
  const session = async (req: Request, opts: { csrf: boolean }): Promise<CurrentSession> => {
    checkOrigin(req, deps.publicBaseUrl);
    const current = await loadSession(deps, sessionTokenOf(req));
    if (opts.csrf) checkCsrf(req, current, deps.publicBaseUrl);
    return current;
  };
  const start = async (req: Request, res: Response, userId: string, teamId: string): Promise<void> => {
    const token = randomToken(32);
    const now = deps.now();
    await insertSession(deps.db, {
      id: newId(),
      user_id: userId,
      team_id: teamId,
      token_hash: sha256Hex(token),
      ip: req.ip ?? null,
      user_agent: req.header('user-agent')?.slice(0, 500) ?? null,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + deps.maxAgeMs),
    });
    res.setHeader('set-cookie', sessionCookie(token, deps.maxAgeMs / 1000));
    const created = await loadSession(deps, token);
    res.status(201).json(await sessionBody(deps.db, created));
  };

  route(router, '/session', {
    post: async (req, res) => {
      checkOrigin(req, deps.publicBaseUrl);
      const body = parseInput(ApiRequests.SignInBody, req.body);
      const waitMs = await deps.signIn.attempt(req.ip ?? 'unknown');
      if (waitMs !== undefined) throw tooMany('Too many sign-in attempts from this address.', waitMs);
      const lockedMs = await deps.signIn.locked(body.email);
      // The same work whether or not the account exists, and whether or not it is locked.
      const user = await findUserByEmail(deps.db, body.email);
      const ok = await verifyPassword(body.password, user?.password_hash);
      if (lockedMs !== undefined) throw tooMany('Too many failed sign-ins for this account.', lockedMs);
      if (!ok || !user) {
        await deps.signIn.failed(body.email);
        throw new ApiError(401, 'invalid_credentials', 'Invalid email or password.');
      }
      await deps.signIn.succeeded(body.email);
      const teams = await membershipsOf(deps.db, user.id);
      const team = body.team_id ? teams.find((t) => t.team_id === body.team_id) : teams[0];
      if (!team) throw new ApiError(403, 'invalid_permission', 'You are not a member of that team.');
      await start(req, res, user.id, team.team_id);
    },
    get: async (req, res) => {
      res.json(await sessionBody(deps.db, await session(req, { csrf: false })));
    },
    delete: async (req, res) => {
      const current = await session(req, { csrf: true });
      await revokeSession(deps.db, current.user_id, current.id);
      res.setHeader('set-cookie', sessionCookie(null, 0));
      res.json({ object: 'session', id: current.id, deleted: true });
    },
  });

  route(router, '/session/team', {
    put: async (req, res) => {
      const current = await session(req, { csrf: true });
      const { team_id } = parseInput(ApiRequests.SwitchTeamBody, req.body);
      const teams = await membershipsOf(deps.db, current.user_id);
      if (!teams.some((t) => t.team_id === team_id)) throw notFound('Team not found');
      await setSessionTeam(deps.db, current.id, team_id);
      res.json(await sessionBody(deps.db, await loadSession(deps, current.token)));
    },
  });

  route(router, '/sessions', {
    get: async (req, res) => {
      const current = await session(req, { csrf: true });
      const now = deps.now();
      const live = (await listSessions(deps.db, current.user_id, now)).filter((s) => sessionLive(s, now, deps.idleMs));
      res.json({ object: 'list', data: live.map((s) => sessionSummary(s, current.id)) });
    },
  });

  route(router, '/sessions/:id', {
    delete: async (req, res) => {
      const current = await session(req, { csrf: true });
      const id = req.params.id;
      if (!id || !isUuid(id) || !(await revokeSession(deps.db, current.user_id, id)))
        throw notFound('Session not found');
      if (id === current.id) res.setHeader('set-cookie', sessionCookie(null, 0));
      res.json({ object: 'session', id, deleted: true });
    },
  });

  route(router, '/password', {
    put: async (req, res) => {
      const current = await session(req, { csrf: true });
      const body = parseInput(ApiRequests.ChangePasswordBody, req.body);
      const user = await findUser(deps.db, current.user_id);
      if (!user || !(await verifyPassword(body.current_password, user.password_hash))) {
        throw new ApiError(401, 'invalid_credentials', 'The current password is wrong.');
      }
      const hash = await hashPassword(body.new_password);
      await deps.db.transaction().execute(async (trx) => {
        await setPassword(trx, user.id, hash);
        await revokeOtherSessions(trx, user.id, current.id);
      });
      res.json({ object: 'user', id: user.id });
    },
  });

  route(router, '/setup', {
    get: async (req, res) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      if (!token || !(await setupTokenValid(deps.db, sha256Hex(token), deps.now())) || (await anyUserExists(deps.db))) {
        throw notFound('This setup link is not valid: it was used, it expired, or an account exists already.');
      }
      res.json({ object: 'setup', valid: true });
    },
    post: async (req, res) => {
      checkOrigin(req, deps.publicBaseUrl);
      const body = parseInput(ApiRequests.SetupBody, req.body);
      const passwordHash = await hashPassword(body.password);
      const created = await deps.db.transaction().execute(async (trx) => {
        // One first account: the token is used once, and only while there is no user at all.
        if (!(await useSetupToken(trx, sha256Hex(body.token), deps.now())) || (await anyUserExists(trx)))
          return undefined;
        const team = await insertTeam(trx, { id: newId(), name: body.team_name });
        const user = await insertUser(trx, {
          id: newId(),
          email: body.email,
          name: body.name,
          password_hash: passwordHash,
        });
        await addMember(trx, team.id, user.id, 'admin');
        return { userId: user.id, teamId: team.id };
      });
      if (!created)
        throw notFound('This setup link is not valid: it was used, it expired, or an account exists already.');
      await start(req, res, created.userId, created.teamId);
    },
  });

  route(router, '/audit-log', {
    get: async (req, res) => {
      const current = await session(req, { csrf: true });
      teamAccessOf(current);
      res.json(await auditLogPage(deps.db, current.team_id, req.query));
    },
  });

  route(router, '/team', {
    get: async (req, res) => {
      const current = await session(req, { csrf: true });
      // Answered while the team's access is off too: the Team page says so.
      const role = current.role;
      if (!role) throw new ApiError(403, 'invalid_permission', 'You are no longer a member of this team.');
      const team = await findTeam(deps.db, current.team_id);
      if (!team) throw notFound('Team not found');
      res.json({
        object: 'team',
        id: team.id,
        name: team.name,
        role,
        access_enabled: team.access_enabled,
        rate_limit_per_second: team.rate_limit_per_second,
        retention_days: team.retention_days ?? DEFAULT_RETENTION_DAYS,
        created_at: formatTimestamp(team.created_at),
      });
    },
  });

  mountTeamRoutes(router, { ...deps, session, start });

  router.use(() => {
    throw notFound('Not found');
  });
  return router;
}

const teamBody = (t: Membership) => ({
  id: t.team_id,
  name: t.team_name,
  role: t.role,
  access_enabled: t.access_enabled,
});

async function sessionBody(db: Kysely<GatewayDb>, session: CurrentSession) {
  const user = await findUser(db, session.user_id);
  const teams = await membershipsOf(db, session.user_id);
  const team = teams.find((t) => t.team_id === session.team_id);
  return {
    object: 'session',
    id: session.id,
    user: user ? { id: user.id, email: user.email, name: user.name } : null,
    team: team ? teamBody(team) : null,
    teams: teams.map(teamBody),
    csrf_token: csrfTokenOf(session.token),
    created_at: formatTimestamp(session.created_at),
    expires_at: formatTimestamp(session.expires_at),
  };
}

function sessionSummary(s: Session, currentId: string) {
  return {
    id: s.id,
    current: s.id === currentId,
    ip: s.ip,
    user_agent: s.user_agent,
    created_at: formatTimestamp(s.created_at),
    last_seen_at: formatTimestamp(s.last_seen_at),
    expires_at: formatTimestamp(s.expires_at),
  };
}
