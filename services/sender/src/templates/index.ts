export { escapeHtml, type PlaceholderValue, renderPlaceholders } from './domain/placeholders.ts';
export { templateRoutes } from './http/templates.ts';
export { renderTemplatedBodies, type TemplatedBody } from './use-cases/templates.ts';
