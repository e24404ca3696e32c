// Compares two OpenAPI documents operation by operation, in the terms a client depends on: the path and
// method, the success status, the required fields of the request body, and the response body's field names
// and types. Used by compatibility.test.ts against Resend's published document.

type Schema = Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, Schema>> } & Schema;

export type Difference = {
  /** `POST /emails/{}`: the method and the path with its parameters unnamed. */
  operation: string;
  kind: 'missing-operation' | 'status' | 'required-request-field' | 'response-field' | 'response-type';
  /** The field (`data[].id`), or the status pair, or `-`. */
  subject: string;
  detail: string;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The path with parameter names dropped: `/emails/{email_id}` and `/emails/{id}` are one path. */
export function pathShape(path: string): string {
  return path.replace(/\{[^}]+\}/g, '{}');
}

function resolve(doc: Doc, schema: Schema | undefined, seen = 0): Schema | undefined {
  if (!schema || seen > 20) return schema;
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, part) => (node as Schema | undefined)?.[part], doc) as Schema | undefined;
    return resolve(doc, target, seen + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as Schema[]).map((part) => resolve(doc, part, seen + 1) ?? {});
    return {
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: parts.flatMap((p) => (p.required as string[] | undefined) ?? []),
    };
  }
  return schema;
}

/** The variants of a schema: the branches of anyOf/oneOf, else itself. */
function variants(doc: Doc, schema: Schema | undefined): Schema[] {
  const resolved = resolve(doc, schema);
  if (!resolved) return [];
  const branches = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
  if (branches) return branches.flatMap((branch) => variants(doc, branch));
  return [resolved];
}

/** The JSON types a schema allows, `null` left out (nullability is not compared). */
function typesOf(doc: Doc, schema: Schema | undefined): Set<string> {
  const types = new Set<string>();
  for (const variant of variants(doc, schema)) {
    let type = variant.type as string | string[] | undefined;
    if (type === undefined && variant.const !== undefined) type = typeof variant.const;
    if (type === undefined && Array.isArray(variant.enum)) type = typeof variant.enum[0];
    if (type === undefined && variant.properties) type = 'object';
    for (const t of Array.isArray(type) ? type : type ? [type] : []) {
      if (t !== 'null') types.add(t === 'integer' ? 'number' : t);
    }
  }
  return types;
}

/** Every field of a response body with its types: `id` → string, `data[].id` → string. */
export function fieldsOf(doc: Doc, schema: Schema | undefined, prefix = '', depth = 0): Map<string, Set<string>> {
  const fields = new Map<string, Set<string>>();
  if (depth > 6) return fields;
  for (const variant of variants(doc, schema)) {
    const properties = (variant.properties ?? {}) as Record<string, Schema>;
    for (const [name, property] of Object.entries(properties)) {
      const field = `${prefix}${name}`;
      const types = fields.get(field) ?? new Set<string>();
      for (const t of typesOf(doc, property)) types.add(t);
      fields.set(field, types);
      for (const [nested, nestedTypes] of fieldsOf(doc, property, `${field}.`, depth + 1))
        fields.set(nested, nestedTypes);
      for (const item of variants(doc, property)) {
        if (item.items) {
          for (const [nested, nestedTypes] of fieldsOf(doc, item.items as Schema, `${field}[].`, depth + 1)) {
            fields.set(nested, nestedTypes);
          }
        }
      }
    }
    if (variant.items && prefix === '') {
      for (const [nested, nestedTypes] of fieldsOf(doc, variant.items as Schema, '[].', depth + 1)) {
        fields.set(nested, nestedTypes);
      }
    }
  }
  return fields;
}

function successOf(operation: Schema): { status: string; schema: Schema | undefined } | undefined {
  const responses = (operation.responses ?? {}) as Record<string, Schema>;
  const status = Object.keys(responses)
    .filter((s) => /^[23]\d\d$/.test(s))
    .sort()[0];
  if (!status) return undefined;
  const content = (responses[status]?.content ?? {}) as Record<string, Schema>;
  return { status, schema: content['application/json']?.schema as Schema | undefined };
}

function requiredRequestFields(doc: Doc, operation: Schema): Set<string> {
  const body = resolve(doc, operation.requestBody as Schema | undefined);
  const content = (body?.content ?? {}) as Record<string, Schema>;
  const schema = Object.values(content)[0]?.schema as Schema | undefined;
  const required = new Set<string>();
  const all = variants(doc, schema);
  // A body that is an object or, as a shorthand, an array (PATCH /contacts/{id}/topics): the object's fields.
  const objects = all.filter((variant) => variant.type !== 'array');
  for (const variant of objects.length > 0 && objects.length < all.length ? objects : all) {
    const target = variant.type === 'array' ? variants(doc, variant.items as Schema)[0] : variant;
    for (const name of (target?.required as string[] | undefined) ?? []) required.add(name);
  }
  return required;
}

function operations(doc: Doc): Map<string, Schema> {
  const found = new Map<string, Schema>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      if (item[method]) found.set(`${method.toUpperCase()} ${pathShape(path)}`, item[method]);
    }
  }
  return found;
}

/**
 * Every difference between `target` (the document to match) and `ours`: operations of `target` that `ours`
 * lacks, and for the operations both have, the success status, required request fields (either way), and
 * response fields missing, added or of another type.
 */
export function compareDocuments(target: Doc, ours: Doc): Difference[] {
  const differences: Difference[] = [];
  const theirs = operations(target);
  const mine = operations(ours);
  for (const [operation, their] of theirs) {
    const my = mine.get(operation);
    if (!my) {
      differences.push({ operation, kind: 'missing-operation', subject: '-', detail: 'not served' });
      continue;
    }
    const theirSuccess = successOf(their);
    const mySuccess = successOf(my);
    if (theirSuccess?.status !== mySuccess?.status) {
      differences.push({
        operation,
        kind: 'status',
        subject: `${theirSuccess?.status}→${mySuccess?.status}`,
        detail: `Resend answers ${theirSuccess?.status}, Postline ${mySuccess?.status}`,
      });
    }
    const theirRequired = requiredRequestFields(target, their);
    const myRequired = requiredRequestFields(ours, my);
    for (const field of new Set([...theirRequired, ...myRequired])) {
      if (theirRequired.has(field) !== myRequired.has(field)) {
        differences.push({
          operation,
          kind: 'required-request-field',
          subject: field,
          detail: theirRequired.has(field) ? 'required by Resend only' : 'required by Postline only',
        });
      }
    }
    const theirFields = fieldsOf(target, theirSuccess?.schema);
    const myFields = fieldsOf(ours, mySuccess?.schema);
    for (const field of new Set([...theirFields.keys(), ...myFields.keys()])) {
      const a = theirFields.get(field);
      const b = myFields.get(field);
      if (!a || !b) {
        differences.push({
          operation,
          kind: 'response-field',
          subject: field,
          detail: a ? 'in Resend only' : 'in Postline only',
        });
      } else if (a.size > 0 && b.size > 0 && ![...a].some((t) => b.has(t))) {
        differences.push({
          operation,
          kind: 'response-type',
          subject: field,
          detail: `Resend ${[...a].join('|')}, Postline ${[...b].join('|')}`,
        });
      }
    }
  }
  return differences;
}

/** A difference's line in the allow-list: `POST /emails/{} | kind | subject`. */
export function differenceKey(d: Pick<Difference, 'operation' | 'kind' | 'subject'>): string {
  return `${d.operation} | ${d.kind} | ${d.subject}`;
}
