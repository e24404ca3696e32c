export { deliverabilityRoutes, type DeliverabilityDeps } from './http/deliverability.ts';
export { createShapingSnapshots, type ShapingSnapshots } from './jobs/shaping-snapshots.ts';
