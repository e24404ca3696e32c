export { createBroadcastFanOutConsumer } from './consumers/broadcast-fan-out.ts';
export { createBroadcastScheduledSendConsumer } from './consumers/broadcast-scheduled-send.ts';
export { broadcastRoutes } from './http/broadcasts.ts';
