// What the dashboard's browser tests share: people made with the admin CLI, signing in through the page as a
// person does, and the checks every page gets (axe-core, a screenshot written for the reader).
import { createServer } from 'node:http';
import { expect } from '@jest/globals';
import type { Page } from 'playwright-core';
import { type SharedSystem } from '@postline/testing';
import { accessibilityViolations, screenshot, type BrowserSession } from '@postline/testing/browser';

export type Person = { id: string; email: string; password: string; teamId: string };

let counter = 0;

/** A person in a team, made with the admin CLI as an operator would (`user create` prints the password once). */
export async function createPerson(
  system: SharedSystem,
  teamId: string,
  role: 'admin' | 'member',
  name = 'Ada',
): Promise<Person> {
  const email = `${name.toLowerCase()}-${process.pid}-${++counter}-${Date.now()}@example.com`;
  const made = await system.admin('user', 'create', '--team', teamId, '--email', email, '--name', name, '--role', role);
  return { id: String(made.user_id), email, password: String(made.password), teamId };
}

/** A new team with its first API key, and its admin. */
export async function createTeam(
  system: SharedSystem,
  name: string,
): Promise<{ teamId: string; apiKey: string; admin: Person }> {
  const team = await system.admin('team', 'create', '--name', name);
  const teamId = String(team.team_id);
  return { teamId, apiKey: String(team.api_key), admin: await createPerson(system, teamId, 'admin') };
}

/** Signs in on the sign-in page; resolves once the signed-in frame shows. */
export async function signIn(
  page: Page,
  person: Pick<Person, 'email' | 'password'>,
  path = '/dashboard/',
): Promise<void> {
  await page.goto(path);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The page as it is now passes axe-core (no serious or critical violation); its screenshot is written. */
export async function checkPage(
  session: BrowserSession,
  name: string,
  opts: { waitForNetworkIdle?: boolean } = {},
): Promise<void> {
  if (opts.waitForNetworkIdle ?? true) await session.page.waitForLoadState('networkidle');
  expect(await accessibilityViolations(session.page)).toEqual([]);
  await screenshot(session.page, name);
}

/**
 * The session's problems but those an email's sandboxed preview causes on purpose, which the browser logs:
 * the email's script it did not run, the remote image `imageUrl` it did not load, and that image once asked for.
 */
export function problemsBesidesThePreview(s: BrowserSession, imageUrl: string): string[] {
  const imageOrigin = new URL(imageUrl).origin;
  return s
    .problems()
    .filter(
      (p) =>
        !/^Blocked script execution in '[^']*\/(share|inbound)\/.*because the document's frame is sandboxed/.test(p) &&
        !(
          p.startsWith(`Loading the image '${imageOrigin}`) &&
          p.includes('violates the following Content Security Policy')
        ) &&
        p !== `request elsewhere: ${imageUrl}`,
    );
}

/** A 1×1 GIF. */
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * A stand-in for a sender's image host (http://127.0.0.1:port): an email's remote image points at it, and
 * counting its requests tells whether a preview loaded the image.
 */
export async function startImageHost(): Promise<{
  origin: string;
  requests: () => number;
  close: () => Promise<void>;
}> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'image/gif' }).end(PIXEL);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
