export { reputationRoutes } from './http/reputation.ts';
export { teamThresholdsRoutes } from './http/team-thresholds.ts';
export { createReputationGuard } from './jobs/reputation-guard.ts';
export { addReputationDeltas, countPauses, TEAM_SCOPE, type ReputationDelta } from './db/reputation.ts';
export {
  countOutcomes,
  DEFAULT_THRESHOLDS,
  pausedMessage,
  type ReputationThresholds,
  type SendingPause,
} from './domain/reputation.ts';
export { parkDeliveries, type ParkedDelivery, type ReputationDeps } from './use-cases/reputation.ts';
