import type { MessagingTables } from '@postline/platform';

/** Only the scheduler's own tables (durable timers); another service's tables cannot be typed here. */
export type SchedulerDb = MessagingTables;
