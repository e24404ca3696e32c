// The API's operations and its OpenAPI document: `@postline/contracts/openapi`, apart from the package's
// index because only the gateway (its reference page) and the tests read them, and their schemas (every
// response shape, every dashboard route) take about 10 MB of heap in each process that loads them.
export {
  FAMILIES,
  OPERATIONS,
  ERROR_STATUS,
  KEYED_ERRORS,
  type Family,
  type HttpMethod,
  type Operation,
  type OperationError,
} from './api/operations.ts';
export {
  API_VERSION,
  EXTENSION_KEY,
  errorsByStatus,
  errorStatus,
  jsonSchemaOf,
  openApiDocument,
  operationId,
  pathParams,
  type OpenApiDocument,
} from './api/openapi.ts';
