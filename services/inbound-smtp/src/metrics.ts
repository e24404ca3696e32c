import { Counter, Gauge, type Metrics } from '@postline/platform';

/** Which SMTP listener a figure is about. */
export type Listener = 'mx' | 'relay';

export type InboundMetrics = {
  /**
   * SMTP transactions by listener and outcome: `accepted` (250 after the commit), `rejected` (a 5xx the
   * client must not retry), `deferred` (a 4xx: storage or the API unavailable, a rate limit).
   */
  messages: Counter<'listener' | 'outcome'>;
  /** SMTP sessions open now, by listener. */
  sessions: Gauge<'listener'>;
  /** Relay AUTH attempts refused (bad key, disabled team, locked out). */
  authFailures: Counter;
  /**
   * Mail to a return-path domain by outcome: `bounce`, `complaint`, `unsubscribe` (acted on), `delayed` (a
   * DSN that only warns), `forged` (a VERP tag that does not verify), `unmatched` (no VERP address found),
   * `ignored` (neither a report nor an unsubscribe request).
   */
  returnPathMail: Counter<'outcome'>;
  /**
   * DMARC aggregate reports by outcome: `stored`, `duplicate`, or dropped: `foreign_domain`, `malformed`,
   * `doctype`, `too_large`, `too_many_records`, `too_many_files`, `no_report` (a message without one),
   * `unknown_address` (a RCPT at our host that is no domain's report address, refused).
   */
  dmarcReports: Counter<'outcome'>;
};

/** The inbound-smtp's own metrics on the service registry (per replica: sum them). */
export function createInboundMetrics(registry: Metrics['registry']): InboundMetrics {
  return {
    messages: new Counter({
      name: 'inbound_smtp_messages_total',
      help: 'SMTP transactions by listener (mx, relay) and outcome (accepted, rejected, deferred)',
      labelNames: ['listener', 'outcome'] as const,
      registers: [registry],
    }),
    sessions: new Gauge({
      name: 'inbound_smtp_sessions',
      help: 'SMTP sessions open now, by listener',
      labelNames: ['listener'] as const,
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'inbound_smtp_auth_failures_total',
      help: 'Relay AUTH attempts refused',
      registers: [registry],
    }),
    returnPathMail: new Counter({
      name: 'inbound_return_path_mail_total',
      help: 'Mail to a return-path domain by outcome (bounce, complaint, unsubscribe, delayed, forged, unmatched, ignored)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    dmarcReports: new Counter({
      name: 'inbound_dmarc_reports_total',
      help: 'DMARC aggregate reports by outcome (stored, duplicate, foreign_domain, malformed, doctype, too_large, too_many_records, too_many_files, no_report, unknown_address)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}
