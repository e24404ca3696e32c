// Operator commands (the runtime contract):
//   npm run admin -- team create --name NAME              → {"team_id":"…","api_key":"pl_…"}
//   npm run admin -- team disable --team ID               → {"team_id":"…","access_enabled":false}
//   npm run admin -- team enable --team ID                → {"team_id":"…","access_enabled":true}
//   npm run admin -- team set-rate-limit --team ID --per-second N
//   npm run admin -- team set-retention --team ID --days N  → {"team_id":"…","retention_days":N}
//   npm run admin -- team set-reputation --team ID [--bounce-rate R] [--complaint-rate R] [--window N] [--min-sends N]
//   npm run admin -- team clear-reputation --team ID      → {"team_id":"…","reputation_thresholds":{…}}
//     (the team's own reputation guard lines, null for each taken from the install; "default" clears one)
//   npm run admin -- user create --team ID --email EMAIL --name NAME [--role admin|member]
//                                                         → {"user_id":"…","team_id":"…","role":"…","password":"…"}
//     (a new user gets a random password, shown once; an existing user is added to the team and keeps theirs)
//   npm run admin -- key create --team ID --name NAME [--permission full_access|sending_access] [--expires-at ISO]
//                                                         → {"id":"…","token":"pl_…"}
//     (full_access unless said; the token is shown once; an expiry must be in the future)
//   npm run admin -- dead-letters list | show | redrive  (admin/dead-letters.ts)
// Each command writes JSON lines on stdout; a usage error exits 2, any other failure 1.
import { runAdminCommand, UsageError } from './commands.ts';

try {
  for (const line of await runAdminCommand(process.argv.slice(2))) process.stdout.write(`${JSON.stringify(line)}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
