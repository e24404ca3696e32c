export { devInboxRoutes } from './http/dev-inbox.ts';
export { createKeepingMta, DEV_INBOX_MX } from './mta/keeping-mta.ts';
