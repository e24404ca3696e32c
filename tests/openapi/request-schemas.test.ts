// The request schema the OpenAPI document shows is the one that validates. The owners validate with the
// contracts' schemas (ApiRequests), imported (POST /emails and the contact import's form too), except for
// the few bodies whose checks use their own rules (a suppressed address's normalization): those are compared
// here with the documented ones. No other route of an owner may validate with a schema of its own.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ApiRequests } from '@postline/contracts';
import { jsonSchemaOf } from '@postline/contracts/openapi';
import {
  AddBody,
  BatchAddBody,
  BatchRemoveBody,
  ListQuery,
} from '../../services/sender/src/suppressions/http/suppressions.ts';

/** A zod schema, as the contracts' JSON Schema builder takes it. */
type Schema = Parameters<typeof jsonSchemaOf>[0];

const root = new URL('../../', import.meta.url).pathname;

/** JSON Schema without descriptions: what a value may be, not what the document says about it. */
function shape(schema: Schema): unknown {
  return JSON.parse(JSON.stringify(jsonSchemaOf(schema, 'input')), (key, value: unknown) =>
    key === 'description' ? undefined : value,
  );
}

/** The schemas an owner validates with that are its own, each with the contract that documents it. */
const OWN_SCHEMAS: Record<string, { file: string; schemas: [Schema, Schema][] }> = {
  'sender suppressions': {
    file: 'services/sender/src/suppressions/http/suppressions.ts',
    schemas: [
      [AddBody, ApiRequests.AddSuppressionBody],
      [BatchAddBody, ApiRequests.BatchAddSuppressionsBody],
      [BatchRemoveBody, ApiRequests.BatchRemoveSuppressionsBody],
      [ListQuery, ApiRequests.SuppressionListQuery],
    ],
  },
};

function httpFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length))
    .filter((file) => /\/http\//.test(file));
}

describe('the request schemas the owners validate with', () => {
  it.each(Object.entries(OWN_SCHEMAS))('%s are the documented ones', (_name, { schemas }) => {
    for (const [validating, documented] of schemas) expect(shape(validating)).toEqual(shape(documented));
  });

  it('are imported from the contracts everywhere else', () => {
    const allowed = new Set(Object.values(OWN_SCHEMAS).map((own) => own.file));
    const files = ['services/sender/src', 'services/domain-verifier/src', 'services/inbound-smtp/src']
      .concat(['services/webhook-dispatcher/src', 'services/api-gateway/src'])
      .flatMap(httpFiles);
    expect(files.length).toBeGreaterThan(10);
    const local: string[] = [];
    for (const file of files) {
      if (allowed.has(file)) continue;
      const source = readFileSync(join(root, file), 'utf8');
      for (const [, name] of source.matchAll(/parseInput\(\s*([A-Za-z_][\w]*)\s*,/g)) {
        if (
          new RegExp(`\\bconst ${name} = z\\b`).test(source) ||
          new RegExp(`\\bconst ${name} =\\s*\\n?\\s*z\\.`).test(source)
        ) {
          local.push(`${file}: ${name}`);
        }
      }
    }
    expect(local).toEqual([]);
  });
});
