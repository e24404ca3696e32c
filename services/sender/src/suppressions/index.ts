export { createExpireSuppressionConsumer } from './consumers/expire-suppression.ts';
export { suppressionRoutes } from './http/suppressions.ts';
export { addSuppressions } from './use-cases/suppressions.ts';
