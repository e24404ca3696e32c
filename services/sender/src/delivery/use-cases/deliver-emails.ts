// Delivering an email to its recipients at one domain (`sender.deliver`), in two steps. attemptDelivery
// reads what the attempt needs and makes it (compose, sign, SMTP) before any transaction; recordAttempts
// then records each recipient's result with the events, suppressions and the retry timer, in the
// transaction of the command (or of a batch of them). Results are recorded only for recipients still at
// this attempt, so a redelivered command records nothing twice; an attempt whose record was lost to a crash
// is made again, which can duplicate a message (RFC 1047) but never loses one.
import type { Kysely, Transaction } from 'kysely';
import { timerMessage, type Logger, type OutboxMessage } from '@postline/platform';
import { addSuppressions } from '../../suppressions/index.ts';
import {
  enqueueAttemptMessages,
  insertAttemptTraces,
  loadAttachments,
  loadAttempts,
  type AttemptLoader,
  type LoadedAttempt,
} from '../db/attempts.ts';
import {
  findRawMime,
  isRawEmail,
  emailEventsOf,
  onboardingDomainOf,
  ONBOARDING_DOMAIN_ID,
} from '../../emails/index.ts';
import {
  addRecipientState,
  countRecentBounces,
  recipientStateColumns,
  updateRecipientStates,
} from '../db/recipients.ts';
import type { ClaimResult, DeliveryClaim } from '../db/delivery-claims.ts';
import type { EmailRow, LastEvent, RecipientRow, SenderDb, SendingDomainRow } from '../../db/schema.ts';
import {
  attemptEffects,
  MAILBOX_BOUNCE_SUB_TYPES,
  planRecipientStates,
  type AttemptEvent,
  type AttemptRecipient,
  type BouncedRecipient,
} from '../domain/attempt-record.ts';
import { suppressedResult, type RecipientResult } from '../domain/recipient-result.ts';
import { retryOf, DELIVERY_LIFETIME_MS, TRANSIENT_SUPPRESSION } from '../domain/retry.ts';
import { providerOfMx, type Provider } from '../domain/providers.ts';
import { sandboxResult } from '../domain/sandbox.ts';
import { type TrackingCipher, rewriteForTracking, UNSUBSCRIBE_PATH } from '../../engagement/index.ts';
import { composeInputOf, isSandboxDomain, type ComposeInput } from '../../message/index.ts';
import { CompositionError, type Composer } from '../mime/composer-pool.ts';
import { DkimSigningError, onboardingKeyPem, type DkimKey, type DkimSigner } from '../mime/dkim.ts';
import { messageFootprint, type ByteBudget } from '../smtp/budget.ts';
import type { SmtpTrace } from '../smtp/transcript.ts';
import type { Mta, RecipientOutcome } from '../smtp/types.ts';
import { verpAddress } from '@postline/platform';
import {
  addReputationDeltas,
  countOutcomes,
  parkDeliveries,
  type ParkedDelivery,
  type ReputationDelta,
} from '../../reputation/index.ts';

/** A `sender.deliver` command once made: nothing to attempt, or the result of each recipient it reached. */
export type DeliveryAttempt =
  | { kind: 'skip' }
  /** The reputation guard paused the team or its sending domain: the command is parked until a resume. */
  | { kind: 'paused'; parked: ParkedDelivery }
  | {
      kind: 'attempted';
      email: EmailRow;
      recipients: RecipientRow[];
      results: RecipientResult[];
      attempt: number;
      /** The attempts before this one that the traffic shaping deferred (the command's `throttled`). */
      throttled: number;
      domain: string;
      /** What each MX address tried (or the MX lookup) said, in order; empty when nothing went to SMTP. */
      traces: SmtpTrace[];
      /** The header block of the message as signed and sent (its DKIM-Signature first); null if none was made. */
      messageHeaders: string | null;
      /** The claim this attempt holds until its record commits or it is given up (releaseAttemptClaims). */
      claim?: DeliveryClaim;
    };

export type DeliverDeps = {
  db: Kysely<SenderDb>;
  mta: Mta;
  /** Composes and signs each message (createComposerPool: on worker threads; createInProcessComposer). */
  composer: Composer;
  /** The DKIM private key (PEM) sealed in the domains' read model (createOpenedCache over the secret box). */
  openDkimKey: (sealed: string) => string;
  verpKey: string;
  /** POSTLINE_DELAY_SCALE */
  delayScale: number;
  now: () => Date;
  logger: Logger;
  /** Told each attempt that went to SMTP: its recipients' results and how long it took. */
  observe?: (results: readonly RecipientResult[], seconds: number) => void;
  /** Reads an attempt (createAttemptLoader joins concurrent reads); default: one statement per attempt. */
  loadAttempt?: AttemptLoader;
  /** Bounds the memory of messages being composed and sent (createByteBudget). */
  budget: ByteBudget;
  /**
   * Open and click tracking: the cipher of the tracking tokens, and PUBLIC_BASE_URL (whose unsubscribe
   * links are never rewritten). Without it, nothing is tracked.
   */
  tracking?: { cipher: TrackingCipher; publicBaseUrl: string };
  /** Signs a raw email's stored MIME (createDkimSigner: one per process, so that its opened keys are kept). */
  signRaw: DkimSigner;
  /**
   * Records each SMTP transaction before it starts (jobs/delivery-claims.ts): `held` while another live
   * process makes the same attempt.
   */
  claims: { claim: (claim: DeliveryClaim) => Promise<ClaimResult>; release: (claim: DeliveryClaim) => void };
  /** How long a copy waits between looks at an attempt another live process holds. Default 1 s. */
  heldPollMs?: number;
  /** Counts an attempt made again after the process holding it died (its message may have gone out). */
  onRetaken?: () => void;
  /**
   * DEV_INBOX: the MTA keeps every message in the install, so a domain the team has added delivers before it
   * is verified (its messages are still signed with its key).
   */
  devInbox?: boolean;
};

/** The `sender.deliver` command: the recipients (positions) of an email at one domain, and which attempt. */
export type DeliverCommand = {
  team_id: string | null;
  data: { email_id: string; domain: string; recipients: number[]; attempt: number; throttled?: number };
};

/** Reads what the attempt needs and makes it (before any transaction). */
export async function attemptDelivery(deps: DeliverDeps, command: DeliverCommand): Promise<DeliveryAttempt> {
  const { email_id: emailId, domain, recipients: positions, attempt } = command.data;
  if (!command.team_id) return { kind: 'skip' };
  const query = { teamId: command.team_id, emailId, positions, attempt };
  const load = async () => {
    const at = { ...query, now: deps.now() };
    return deps.loadAttempt ? await deps.loadAttempt(at) : (await loadAttempts(deps.db, [at]))[0];
  };
  const loaded = await load();
  if (!loaded) return { kind: 'skip' };
  // A paused team's or domain's recipients stay pending: the command is parked (recordAttempts) and sent
  // again when an admin resumes, rather than retried here.
  if (loaded.paused) {
    return {
      kind: 'paused',
      parked: { teamId: command.team_id, domainId: loaded.email.domain_id, command: command.data },
    };
  }
  const claims = deps.claims;
  if (isSandboxDomain(domain)) return attemptLoaded(deps, command, loaded);
  // The attempt is recorded before its SMTP transaction. Another live process making the same attempt (a copy
  // of this command redelivered to it) has its outcome coming: wait for it, and make the attempt only if
  // that process dies first. A claim taken from a dead process is an attempt whose outcome is unknown.
  const claim = { emailId, firstPosition: positions[0] ?? 0, attempt };
  let current: LoadedAttempt | undefined = loaded;
  for (;;) {
    const claimed = await claims.claim(claim);
    if (claimed.kind === 'claimed') {
      // Taken from a process that stopped holding it: read again, in case its outcome was recorded since.
      if (claimed.retaken) current = await load();
      if (!current) {
        claims.release(claim);
        return { kind: 'skip' };
      }
      if (claimed.retaken) deps.onRetaken?.();
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, deps.heldPollMs ?? 1_000));
    current = await load();
    if (!current) return { kind: 'skip' };
  }
  // Held (kept fresh) until the attempt's record commits or the attempt is given up, not only while its
  // SMTP transaction lasts: until then a copy elsewhere must not take it.
  try {
    const made = await attemptLoaded(deps, command, current);
    if (made.kind === 'attempted') return { ...made, claim };
    claims.release(claim);
    return made;
  } catch (err) {
    claims.release(claim);
    throw err;
  }
}

/**
 * Gives up the claims of attempts whose record committed, or that will not be recorded (their message goes
 * to a retry tier): the claim stops being refreshed and goes stale, so that a copy may take it.
 */
export function releaseAttemptClaims(deps: DeliverDeps, attempts: readonly DeliveryAttempt[]): void {
  for (const attempt of attempts) if (attempt.kind === 'attempted' && attempt.claim) deps.claims.release(attempt.claim);
}

/** Makes the attempt of a loaded command (its SMTP transaction unless nothing is left to send). */
async function attemptLoaded(
  deps: DeliverDeps,
  command: DeliverCommand,
  loaded: LoadedAttempt,
): Promise<DeliveryAttempt> {
  const { domain, attempt } = command.data;
  const { email, recipients, suppressed } = loaded;
  // The onboarding sender's emails have no domain row: they go to sandbox addresses, and to the team's
  // members through the development inbox (deliverSigned keeps them in the install), never out.
  const sending = loaded.sending ?? onboardingDomainOf(email);
  const made: Made = { traces: [], messageHeaders: null };
  const done = (results: RecipientResult[]): DeliveryAttempt => ({
    kind: 'attempted',
    email,
    recipients,
    results,
    attempt,
    throttled: command.data.throttled ?? 0,
    domain,
    traces: made.traces,
    messageHeaders: made.messageHeaders,
  });
  if (!sending || sending.deleted || !(sending.sending_verified || deps.devInbox))
    return done(recipients.map(() => ({ kind: 'failed', reason: 'domain_not_verified' })));

  const results: (RecipientResult | undefined)[] = recipients.map((recipient) =>
    suppressedResult(suppressed.get(recipient.address.toLowerCase())),
  );
  if (isSandboxDomain(domain)) {
    return done(recipients.map((recipient, i) => results[i] ?? sandboxResult(recipient.address)));
  }

  const toSend = recipients.filter((_, i) => results[i] === undefined);
  if (toSend.length > 0) {
    const started = process.hrtime.bigint();
    // Mail for a provider its traffic shaping holds is deferred before its message is made: every attempt
    // against the hold would otherwise compose and sign it for nothing, on the cores the other providers'
    // deliveries need.
    const held = await deps.mta.held({
      domain: (toSend[0] as RecipientRow).domain,
      recipients: toSend.map((r) => r.address),
      trace: made.traces,
      keep: sending.domain_id === ONBOARDING_DOMAIN_ID,
    });
    const outcomes = held ?? (await makeAndSend(deps, email, sending, toSend, loaded, made));
    const outcomeOf = new Map(Array.isArray(outcomes) ? outcomes.map((outcome) => [outcome.recipient, outcome]) : []);
    recipients.forEach((recipient, i) => {
      if (results[i] !== undefined) return;
      if (!Array.isArray(outcomes)) return void (results[i] = { kind: 'failed', reason: outcomes.unsendable });
      const outcome = outcomeOf.get(recipient.address);
      results[i] = outcome
        ? resultOf(outcome)
        : { kind: 'deferred', code: 451, response: '4.3.0 No outcome reported', fromServer: false };
    });
    deps.observe?.(results as RecipientResult[], Number(process.hrtime.bigint() - started) / 1e9);
  }
  return done(results as RecipientResult[]);
}

/**
 * Makes the message (composed, or a raw email's MIME) within the memory budget, signs it and sends it to
 * `recipients` in one SMTP transaction; `unsendable` when it cannot be made.
 */
async function makeAndSend(
  deps: DeliverDeps,
  email: EmailRow,
  sending: SendingDomainRow,
  recipients: RecipientRow[],
  loaded: LoadedAttempt,
  made: Made,
): Promise<RecipientOutcome[] | { unsendable: string }> {
  // A raw email's MIME is read before its share of the budget, which its size sets.
  const rawMime = isRawEmail(email) ? await findRawMime(deps.db, email.id) : undefined;
  const footprint = rawMime
    ? messageFootprint({ html: null, text: null }, rawMime.length)
    : messageFootprint(email, loaded.attachmentBytes);
  const release = await deps.budget.reserve(footprint);
  try {
    return await (isRawEmail(email)
      ? signAndSendRaw(deps, email, rawMime, sending, recipients, made)
      : composeAndSend(deps, email, sending, recipients, loaded.hasAttachments, made));
  } catch (err) {
    // The message cannot be made (a DKIM key that cannot sign, content the composer refuses): another
    // try would fail alike, and it is never sent unsigned, so its recipients here end failed.
    if (!(err instanceof DkimSigningError || err instanceof CompositionError)) throw err;
    deps.logger.error(
      { err, emailId: email.id, domain: sending.name },
      'email cannot be composed and signed; its delivery fails',
    );
    return { unsendable: err instanceof DkimSigningError ? 'dkim_signing_failed' : 'message_not_composable' };
  } finally {
    release();
  }
}

/** What an attempt kept of the message it sent: each transaction's trace and the signed header block. */
type Made = { traces: SmtpTrace[]; messageHeaders: string | null };

/** At most this much of a message's header block is kept with its attempt. */
const HEADER_BLOCK_MAX = 32_768;

/** The header block of a message (CRLF line endings), up to the blank line that ends it, bounded. */
function headerBlock(raw: Buffer): string {
  const end = raw.indexOf('\r\n\r\n');
  return raw.subarray(0, Math.min(end < 0 ? raw.length : end, HEADER_BLOCK_MAX)).toString('utf8');
}

/** A recipient's result from the MTA's outcome for it. */
function resultOf(outcome: RecipientOutcome): RecipientResult {
  switch (outcome.status) {
    case 'delivered':
      return { kind: 'delivered', code: outcome.code, response: outcome.response };
    case 'deferred':
      return {
        kind: 'deferred',
        code: outcome.code,
        response: outcome.response,
        fromServer: outcome.mx !== null,
        ...(outcome.throttle ? { throttle: outcome.throttle } : {}),
      };
    case 'bounced':
      return { kind: 'bounced', code: outcome.code, response: outcome.response, bounce: outcome.bounce };
  }
}

/** Composes and signs the message, then sends it to `recipients` in one SMTP transaction. */
async function composeAndSend(
  deps: DeliverDeps,
  email: EmailRow,
  sending: SendingDomainRow,
  recipients: RecipientRow[],
  hasAttachments: boolean,
  made: Made,
): Promise<RecipientOutcome[]> {
  const attachments = hasAttachments ? await loadAttachments(deps.db, email.id) : [];
  const input = withTracking(deps, composeInputOf(email, attachments), email.id, sending);
  // Throws a DkimSigningError when no signature can be made: the message never goes out unsigned.
  const raw = await deps.composer.compose(input, dkimKeyOf(deps, sending));
  return deliverSigned(deps, email, sending, recipients, raw, made);
}

/**
 * Signs a raw email's stored MIME (the client's message as prepared at accept: no composing, no tracking
 * rewrite) with the domain's key, as a composed one is signed, and sends it to `recipients` in one SMTP
 * transaction from the same VERP address. A raw email without its MIME cannot be made (CompositionError).
 */
async function signAndSendRaw(
  deps: DeliverDeps,
  email: EmailRow,
  mime: Buffer | undefined,
  sending: SendingDomainRow,
  recipients: RecipientRow[],
  made: Made,
): Promise<RecipientOutcome[]> {
  if (!mime) throw new CompositionError(`The raw email ${email.id} has no stored MIME.`);
  // Throws a DkimSigningError when no signature can be made: the message never goes out unsigned.
  const raw = await deps.signRaw(mime, dkimKeyOf(deps, sending));
  return deliverSigned(deps, email, sending, recipients, raw, made);
}

/**
 * The key a domain's messages are signed with: its own, or for the onboarding sender (whose messages stay in
 * the install) a key this process made, under the selector `onboarding`.
 */
function dkimKeyOf(deps: DeliverDeps, sending: SendingDomainRow): DkimKey {
  if (sending.domain_id === ONBOARDING_DOMAIN_ID)
    return { domain: sending.name, selector: 'onboarding', privateKeyPem: onboardingKeyPem() };
  return {
    domain: sending.name,
    selector: sending.dkim_selector,
    privateKeyPem: deps.openDkimKey(sending.dkim_private_key_encrypted),
  };
}

/** Sends a signed message to `recipients` in one SMTP transaction, from the email's VERP address. */
function deliverSigned(
  deps: DeliverDeps,
  email: EmailRow,
  sending: SendingDomainRow,
  recipients: RecipientRow[],
  raw: Buffer,
  made: Made,
): Promise<RecipientOutcome[]> {
  made.messageHeaders = headerBlock(raw);
  const single = recipients.length === 1 ? (recipients[0] as RecipientRow).position : undefined;
  return deps.mta.deliver({
    domain: (recipients[0] as RecipientRow).domain,
    envelopeFrom: verpAddress({
      emailId: email.id,
      recipient: single,
      returnPath: sending.return_path,
      key: deps.verpKey,
    }),
    recipients: recipients.map((r) => r.address),
    raw,
    requireTls: sending.tls === 'enforced',
    trace: made.traces,
    origin: { teamId: email.team_id, emailId: email.id },
    keep: sending.domain_id === ONBOARDING_DOMAIN_ID,
  });
}

/**
 * The message input with the domain's open and click tracking applied to its html, before it is composed
 * and signed (DKIM signs what is sent). Only once the tracking host's records are verified; the text part
 * is left as it was. Without tracking the input is returned as it is.
 */
function withTracking(
  deps: DeliverDeps,
  input: ComposeInput,
  emailId: string,
  sending: SendingDomainRow,
): ComposeInput {
  const tracking = deps.tracking;
  if (!tracking || input.html === null || !sending.tracking_verified || !sending.tracking_subdomain) return input;
  if (!sending.open_tracking && !sending.click_tracking) return input;
  const trackingHost = `${sending.tracking_subdomain}.${sending.name}`;
  const html = rewriteForTracking(input.html, {
    emailId,
    trackingHost,
    open: sending.open_tracking,
    click: sending.click_tracking,
    unsubscribePrefix: `${tracking.publicBaseUrl.replace(/\/+$/, '')}${UNSUBSCRIBE_PATH}/`,
    seal: (link) => tracking.cipher.seal(link, trackingHost),
  });
  return { ...input, html, untrackedHtml: input.html };
}

/**
 * Records the results of attempts (one, or a worker's batch) with their events, suppressions and retry
 * timers: one statement for every recipient of every attempt and one for all their events, whatever the
 * number of attempts. Only recipients still at an attempt are updated, so a redelivered command (or a racing
 * duplicate, in this batch or another) records nothing and emits nothing; the effect is that of recording
 * the attempts one after another.
 */
export async function recordAttempts(
  deps: DeliverDeps,
  trx: Transaction<SenderDb>,
  attempts: readonly DeliveryAttempt[],
): Promise<void> {
  const parked = attempts.flatMap((a) => (a.kind === 'paused' ? [a.parked] : []));
  if (parked.length > 0) await parkDeliveries(trx, parked, deps.now());
  const made = attempts.filter((a): a is DeliveryAttempt & { kind: 'attempted' } => a.kind === 'attempted');
  if (made.length === 0) return;
  const now = deps.now();
  const lifetimeMs = DELIVERY_LIFETIME_MS * deps.delayScale;
  const transitions = made.map((a) => planRecipientStates(a.recipients, a.results, now, lifetimeMs));

  // A recipient at one attempt is recorded once: the first copy in the batch wins, as it would in turn.
  const key = (emailId: string, position: number, attempt: number) => `${emailId.toLowerCase()} ${position} ${attempt}`;
  const seen = new Set<string>();
  const states = recipientStateColumns();
  made.forEach((a, i) => {
    const providers = providersOf(a.traces);
    for (const transition of transitions[i]!) {
      const recipientKey = key(a.email.id, transition.recipient.position, a.attempt);
      if (seen.has(recipientKey)) continue;
      seen.add(recipientKey);
      addRecipientState(states, a.email.id, a.attempt, transition, providers.get(transition.recipient.address) ?? null);
    }
  });
  const updatedRows = await updateRecipientStates(trx, states, now);
  // Each updated recipient is credited to one attempt only (the first holding it), as `seen` kept one copy.
  const updated = new Set(updatedRows.map((u) => key(u.email_id, u.position, u.attempts)));

  const messages: OutboxMessage[] = [];
  const lastEvents = new Map<string, LastEvent>();
  const bounces: { email: EmailRow; bounced: BouncedRecipient[] }[] = [];
  const reputation: ReputationDelta[] = [];
  made.forEach((a, i) => {
    const recorded = (recipient: AttemptRecipient) => updated.delete(key(a.email.id, recipient.position, a.attempt));
    const effects = attemptEffects(transitions[i]!, recorded);
    if (countsTowardReputation(a.email, a.domain)) reputation.push(reputationDeltaOf(a.email, effects.events));
    messages.push(...emailEventsOf(a.email, effects.events));
    if (effects.retry.length > 0) messages.push(retryTimer(deps, a, effects.retry, now));
    if (effects.lastEvent) lastEvents.set(a.email.id, effects.lastEvent);
    if (effects.bounced.length > 0) bounces.push({ email: a.email, bounced: effects.bounced });
  });
  if (messages.length > 0) await enqueueAttemptMessages(trx, messages, lastEvents);
  await addReputationDeltas(trx, reputation, now);
  await insertAttemptTraces(
    trx,
    made.map((a) => ({
      teamId: a.email.team_id,
      emailId: a.email.id,
      firstPosition: a.recipients[0]?.position ?? 0,
      attempt: a.attempt,
      traces: a.traces,
      messageHeaders: a.messageHeaders,
    })),
  );

  for (const { email, bounced } of bounces) {
    const suppress = bounced.filter((b) => b.suppress);
    if (suppress.length > 0) {
      await addSuppressions(
        trx,
        email.team_id,
        suppress.map((b) => ({ email: b.address, origin: 'bounce' as const, sourceId: email.id })),
        now,
      );
    }
    const transient = bounced.filter((b) => b.transient && !b.suppress);
    if (transient.length > 0)
      await suppressRepeatedTransients(
        deps,
        trx,
        email.team_id,
        email.id,
        transient.map((b) => b.address),
        now,
      );
  }
}

/**
 * Whether an attempt's outcomes count toward the reputation guard's rates: not those of sandbox addresses
 * (postline.test, resend.dev: tests, nothing is sent) nor the onboarding sender's (sandbox addresses and the
 * team's members, kept in the install).
 */
function countsTowardReputation(email: EmailRow, recipientDomain: string): boolean {
  return !isSandboxDomain(recipientDomain) && email.domain_id !== ONBOARDING_DOMAIN_ID;
}

/** What an attempt's events add to its team's and sending domain's reputation windows. */
function reputationDeltaOf(email: EmailRow, events: readonly AttemptEvent[]): ReputationDelta {
  const recipients = (type: AttemptEvent['type']) =>
    events.filter((e) => e.type === type).reduce((n, e) => n + e.to.length, 0);
  const counts = countOutcomes({
    delivered: recipients('email.delivered'),
    bounced: events.flatMap((e) => (e.type === 'email.bounced' ? [e.extra.bounce] : [])),
    complained: recipients('email.complained'),
  });
  return { teamId: email.team_id, domainId: email.domain_id, ...counts };
}

/** Each recipient's mailbox provider, from the last MX host its attempt reached. */
function providersOf(traces: readonly SmtpTrace[]): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const trace of traces) {
    if (trace.mx === null) continue;
    for (const recipient of trace.recipients) providers.set(recipient, providerOfMx(trace.mx));
  }
  return providers;
}

/** When the attempt's provider has a turn again, when its shaping deferred every recipient it deferred. */
function throttledUntil(results: readonly RecipientResult[]): Date | undefined {
  const deferred = results.filter((r) => r.kind === 'deferred');
  if (deferred.length === 0 || deferred.some((r) => !r.throttle)) return undefined;
  return new Date(Math.max(...deferred.map((r) => r.throttle!.until.getTime())));
}

/**
 * The timer that sends the command again for the deferred `positions`: after the back-off, or when the
 * provider has a turn again if its shaping deferred them (retryOf).
 */
function retryTimer(
  deps: DeliverDeps,
  a: DeliveryAttempt & { kind: 'attempted' },
  positions: number[],
  now: Date,
): OutboxMessage {
  const retry = retryOf(a, throttledUntil(a.results), now, deps.delayScale);
  return timerMessage(
    a.email.team_id,
    `email-deliver:${a.email.id}:${a.domain}:${positions[0] ?? 0}`,
    retry.due,
    'sender.deliver',
    {
      email_id: a.email.id,
      domain: a.domain,
      recipients: positions,
      attempt: retry.attempt,
      ...(retry.throttled > 0 ? { throttled: retry.throttled } : {}),
    },
  );
}

/** A few transient bounces of one address in a window make a temporary suppression that expires. */
async function suppressRepeatedTransients(
  deps: DeliverDeps,
  trx: Transaction<SenderDb>,
  teamId: string,
  emailId: string,
  addresses: string[],
  now: Date,
): Promise<void> {
  const since = new Date(now.getTime() - TRANSIENT_SUPPRESSION.windowMs * deps.delayScale);
  const counts = await countRecentBounces(trx, teamId, addresses, { since, subTypes: MAILBOX_BOUNCE_SUB_TYPES });
  const repeated = counts
    .filter((count) => count.bounces >= TRANSIENT_SUPPRESSION.bounces)
    .map((count) => count.address);
  if (repeated.length === 0) return;
  const expiresAt = new Date(now.getTime() + TRANSIENT_SUPPRESSION.durationMs * deps.delayScale);
  await addSuppressions(
    trx,
    teamId,
    repeated.map((email) => ({ email, origin: 'bounce' as const, sourceId: emailId, expiresAt })),
    now,
  );
}
