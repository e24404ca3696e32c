export { devInboxRoutes } from './http/dev-inbox.ts';
export { createDevInboxPrune } from './jobs/prune.ts';
export { createKeepingMta, DEV_INBOX_MX } from './mta/keeping-mta.ts';
