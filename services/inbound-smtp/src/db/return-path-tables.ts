/** Mail received at return-path domains (bounces, complaints, unsubscribe requests). */
export type ReturnPathTables = Record<never, never>;
