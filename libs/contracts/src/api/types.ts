// The wire types of the API, for clients written in TypeScript (the dashboard): each request body, query and
// response as its zod schema parses or produces it. Types only, so a browser bundle that imports them carries
// none of zod: `import type { ApiShape } from '@postline/contracts'`.
import type { z } from 'zod';
import type * as Shapes from './shapes.ts';
import type * as DashboardShapes from './dashboard-shapes.ts';
import type * as Requests from './requests.ts';

type Schemas<M> = { [K in keyof M as M[K] extends z.ZodType ? K : never]: M[K] };
type SchemaOf<M, K extends keyof Schemas<M>> = Schemas<M>[K] extends z.ZodType ? Schemas<M>[K] : never;

/** A response body of the public API, by its schema's name in shapes.ts: `ApiShape<'DomainList'>`. */
export type ApiShape<K extends keyof Schemas<typeof Shapes>> = z.output<SchemaOf<typeof Shapes, K>>;

/** A response body of the dashboard's own routes (`/dashboard-api/`), by its name in dashboard-shapes.ts. */
export type DashboardShape<K extends keyof Schemas<typeof DashboardShapes>> = z.output<
  SchemaOf<typeof DashboardShapes, K>
>;

/** A request body or query, as a client sends it, by its schema's name in requests.ts: `ApiRequest<'CreateDomainBody'>`. */
export type ApiRequest<K extends keyof Schemas<typeof Requests>> = z.input<SchemaOf<typeof Requests, K>>;
