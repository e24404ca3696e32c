// The admin CLI's commands for a test system, kept loaded: one process per system reads a command per line
// on stdin ({"id", "args"}) and answers each on stdout ({"id", "line"} or {"id", "error"}), in order. The
// tests make their teams, people and keys with it (libs/testing's `system.admin`): the same commands as
// `npm run admin`, without a Node start-up for each. The CLI itself is tested as a command in accounts.
import { createInterface } from 'node:readline';
import { runAdminCommand } from '../src/admin/commands.ts';

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const text of input) {
  const { id, args } = JSON.parse(text) as { id: number; args: string[] };
  let answer: object;
  try {
    answer = { id, line: (await runAdminCommand(args)).at(-1) ?? {} };
  } catch (err) {
    answer = { id, error: err instanceof Error ? err.message : String(err) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
