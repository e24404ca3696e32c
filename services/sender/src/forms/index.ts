export { createFormTokens, type FormTokens } from './domain/form-tokens.ts';
export { formRoutes, type FormRouteDeps } from './http/forms.ts';
export { hostedFormRoutes } from './http/hosted.ts';
export type { SignupDeps } from './use-cases/signups.ts';
