export { escapeHtml, type PlaceholderValue, renderPlaceholders } from '@postline/contracts/placeholders';
export { templateRoutes } from './http/templates.ts';
export { renderTemplatedBodies, type TemplatedBody } from './use-cases/templates.ts';
