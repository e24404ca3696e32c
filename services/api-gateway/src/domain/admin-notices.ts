// The emails that tell a team's admins what needs them: a webhook endpoint disabled by its failures, sending
// paused by the reputation guard. Plain text, with the dashboard page where it is put right.
import type { ReputationPaused, WebhookDisabled } from '@postline/contracts';

/** A time as people read it in an email: `2026-11-27 22:49 UTC`. */
function utc(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The email that tells an admin of `team` that one of its webhook endpoints was disabled: which, why, since
 * when it failed, and the dashboard page where it is enabled again and its failures replayed.
 */
export function webhookDisabledEmail(opts: {
  event: WebhookDisabled;
  team: string;
  name: string;
  publicBaseUrl: string;
}): { subject: string; text: string } {
  const { event, team, name } = opts;
  const page = new URL(`/dashboard/webhooks/${event.webhook_id}`, opts.publicBaseUrl).toString();
  return {
    subject: `Webhook endpoint disabled: ${event.endpoint}`,
    text: [
      `Hello ${name},`,
      '',
      `Postline disabled the webhook endpoint ${event.endpoint} of the team ${team} at ${utc(event.disabled_at)}: ` +
        `${event.reason} (failing since ${utc(event.failing_since)}).`,
      '',
      'Its events are still recorded, as failed. Once the endpoint answers again, enable it and replay its ' +
        'failures since then to receive them, on this page:',
      '',
      page,
      '',
      `You receive this email as an admin of ${team}.`,
    ].join('\n'),
  };
}

/** A fraction as a percentage people read: 0.0412 → `4.12%`, 0.0008 → `0.08%`. */
function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)}%`;
}

/**
 * The email that tells an admin of `team` that the reputation guard paused its sending (or one domain's):
 * which rate crossed which line over how many sends, what waits, and where an admin resumes.
 */
export function reputationPausedEmail(opts: {
  event: ReputationPaused;
  team: string;
  name: string;
  publicBaseUrl: string;
}): { subject: string; text: string } {
  const { event, team, name } = opts;
  const what = event.scope === 'domain' && event.domain ? `sending from ${event.domain}` : 'sending';
  const [rate, line, label] =
    event.reason === 'bounce_rate'
      ? [event.bounce_rate, event.thresholds.bounce_rate, 'bounce rate']
      : [event.complaint_rate, event.thresholds.complaint_rate, 'complaint rate'];
  const page = new URL('/dashboard/', opts.publicBaseUrl).toString();
  return {
    subject: `Sending paused for ${event.scope === 'domain' && event.domain ? event.domain : team}: ${label} ${percent(rate)}`,
    text: [
      `Hello ${name},`,
      '',
      `Postline paused ${what} for the team ${team} at ${utc(event.paused_at)}: its ${label} over the last ` +
        `${event.sends} sends is ${percent(rate)}, above the line of ${percent(line)}.`,
      '',
      'New sends are refused (sending_paused) and queued emails wait; nothing is lost. Find out why the ' +
        'addresses bounced or complained (an old list, a form without confirmation), then an admin resumes ' +
        'sending in the dashboard:',
      '',
      page,
      '',
      `You receive this email as an admin of ${team}.`,
    ].join('\n'),
  };
}
