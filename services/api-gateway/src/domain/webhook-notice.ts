import type { WebhookDisabled } from '@postline/contracts';

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
