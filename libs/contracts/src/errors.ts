import { z } from 'zod';

/** Every error name the API answers with (Resend's API reference, "Errors"). Clients switch on these. */
export const ErrorName = z.enum([
  'invalid_idempotency_key',
  'validation_error',
  'missing_api_key',
  'restricted_api_key',
  'invalid_api_key',
  'email_above_quota',
  'invalid_permission',
  'suspended_api_key',
  'not_found',
  'method_not_allowed',
  'concurrent_idempotent_requests',
  'invalid_idempotent_request',
  'resource_locked',
  'invalid_attachment',
  'invalid_from_address',
  'invalid_access',
  'invalid_parameter',
  'invalid_region',
  'missing_required_field',
  'missing_required_parameter',
  'daily_quota_exceeded',
  'monthly_quota_exceeded',
  'rate_limit_exceeded',
  'security_error',
  'application_error',
  'internal_server_error',
  'service_unavailable',
  // The dashboard's own routes and session requests (not part of Resend's surface).
  'invalid_credentials',
  'invalid_session',
  'invalid_csrf_token',
  'team_access_disabled',
  // Postline's: sending a broadcast whose review has errors (GET /broadcasts/{id}/review lists them).
  'broadcast_review_failed',
  // Postline's: the reputation guard paused the team's (or the domain's) sending; an admin resumes it.
  'sending_paused',
]);
export type ErrorName = z.infer<typeof ErrorName>;

/** The body of every 4xx/5xx response. */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  name: ErrorName,
  message: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
