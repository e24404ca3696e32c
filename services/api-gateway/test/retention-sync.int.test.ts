// The gateway's push of a team's retention to the owners that keep a copy (sender, inbound-smtp,
// webhook-dispatcher), here local stand-ins over real HTTP: every owner is told, one that refuses is told
// again until it answers, and only then is the change marked done. The reputation guard's lines the operator
// set for a team go to the sender the same way.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TEAM_HEADER } from '@postline/platform';
import { waitFor } from '@postline/testing';
import { setTeamReputation, setTeamRetention } from '../src/db/teams.ts';
import { startGateway, type Gateway } from './harness.ts';

type Push = { path: string; method: string; team: string | undefined; body: unknown };
type StandIn = { url: string; pushes: Push[]; status: number; server: Server };

async function standIn(): Promise<StandIn> {
  const owner = { pushes: [] as Push[], status: 204 } as StandIn;
  owner.server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      owner.pushes.push({
        path: req.url ?? '',
        method: req.method ?? '',
        team: req.headers[TEAM_HEADER] as string | undefined,
        body: JSON.parse(body || '{}') as unknown,
      });
      res.writeHead(owner.status).end();
    });
  });
  await new Promise<void>((resolve) => owner.server.listen(0, '127.0.0.1', resolve));
  owner.url = `http://127.0.0.1:${(owner.server.address() as AddressInfo).port}`;
  return owner;
}

let gw: Gateway;
const owners: Record<'sender' | 'inbound-smtp' | 'webhook-dispatcher', StandIn> = {} as never;

beforeAll(async () => {
  for (const name of ['sender', 'inbound-smtp', 'webhook-dispatcher'] as const) owners[name] = await standIn();
  gw = await startGateway({
    owners: Object.fromEntries(Object.entries(owners).map(([name, owner]) => [name, owner.url])),
    // The push every 200 ms rather than every 5 s.
    env: { POSTLINE_DELAY_SCALE: '0.01' },
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all(Object.values(owners).map((o) => new Promise((resolve) => o.server.close(resolve))));
});

const unsynced = async (teamId: string) =>
  (await gw.db.selectFrom('teams').select('retention_unsynced').where('id', '=', teamId).executeTakeFirstOrThrow())
    .retention_unsynced;

describe('the retention push', () => {
  it('tells every owner, again until a refusing one answers, and then marks the change done', async () => {
    const team = await gw.createTeam();
    owners['inbound-smtp'].status = 503;
    const changedAt = new Date();
    await setTeamRetention(gw.db, team.teamId, 90, changedAt);
    const expected: Push = {
      path: '/internal/team-retention',
      method: 'PUT',
      team: team.teamId,
      body: { days: 90, changed_at: changedAt.toISOString() },
    };
    for (const owner of Object.values(owners)) {
      await waitFor('the owner told', () => owner.pushes.some((p) => p.team === team.teamId));
      expect(owner.pushes.find((p) => p.team === team.teamId)).toEqual(expected);
    }
    // The refusing owner is asked again, and the change stays to be told meanwhile.
    const inbound = owners['inbound-smtp'];
    await waitFor('a second push', () => inbound.pushes.filter((p) => p.team === team.teamId).length >= 2);
    expect(await unsynced(team.teamId)).toBe(true);

    inbound.status = 204;
    await waitFor('the change marked done', async () => !(await unsynced(team.teamId)));
    // Done: no further pushes of it.
    const told = owners.sender.pushes.filter((p) => p.team === team.teamId).length;
    await setTeamRetention(gw.db, team.teamId, 7, new Date(changedAt.getTime() + 1000));
    await waitFor('the next change told', () =>
      owners.sender.pushes.some((p) => p.team === team.teamId && (p.body as { days: number }).days === 7),
    );
    expect(owners.sender.pushes.filter((p) => p.team === team.teamId).length).toBe(told + 1);
  });
});

describe('the reputation lines push', () => {
  const reputationUnsynced = async (teamId: string) =>
    (await gw.db.selectFrom('teams').select('reputation_unsynced').where('id', '=', teamId).executeTakeFirstOrThrow())
      .reputation_unsynced;

  it('tells the sender alone, again until it answers, and then marks the change done', async () => {
    const team = await gw.createTeam();
    owners.sender.status = 503;
    const changedAt = new Date();
    const lines = { bounceRate: 0.05, complaintRate: null, window: 5000, minSends: null };
    await setTeamReputation(gw.db, team.teamId, lines, changedAt);
    const sender = owners.sender;
    const isPush = (p: Push) => p.team === team.teamId && p.path === '/internal/team-reputation';
    await waitFor('a second push', () => sender.pushes.filter(isPush).length >= 2);
    expect(sender.pushes.find(isPush)).toEqual({
      path: '/internal/team-reputation',
      method: 'PUT',
      team: team.teamId,
      body: {
        thresholds: { bounce_rate: 0.05, complaint_rate: null, window: 5000, min_sends: null },
        changed_at: changedAt.toISOString(),
      },
    });
    expect(await reputationUnsynced(team.teamId)).toBe(true);
    sender.status = 204;
    await waitFor('the change marked done', async () => !(await reputationUnsynced(team.teamId)));
    // The other owners keep no reputation lines: they are never told.
    for (const owner of [owners['inbound-smtp'], owners['webhook-dispatcher']])
      expect(owner.pushes.filter(isPush)).toEqual([]);
  });
});
