// Postline's OpenAPI document against Resend's published one (version 1.5.0, vendored in
// tests/fixtures/resend-openapi): every difference in path, method, success status, required request
// fields, or response field names and types must be in the allow-list of docs/compatibility.md, with its
// reason, and every entry there must still be a difference.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { openApiDocument } from '@postline/contracts/openapi';
import { compareDocuments, differenceKey } from './compare.ts';

const root = new URL('../../', import.meta.url);
const resend = parse(readFileSync(new URL('tests/fixtures/resend-openapi/resend.yaml', root), 'utf8')) as never;
const compatibilityPage = readFileSync(new URL('docs/compatibility.md', root), 'utf8');

/** The allow-list's rows, one key per field: `GET /emails/{} | response-field | tags` → its reason. */
function allowList(markdown: string): Map<string, string> {
  const section = markdown.split(/^## Allow-list$/m)[1] ?? '';
  const allowed = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 4 || cells[0] === 'Operation' || cells[0]?.startsWith('---')) continue;
    const [operation, kind, fields, reason] = cells.map((cell) => cell.replaceAll('`', '')) as [
      string,
      string,
      string,
      string,
    ];
    for (const field of fields.split(',').map((f) => f.trim())) {
      allowed.set(differenceKey({ operation, kind: kind as never, subject: field }), reason);
    }
  }
  return allowed;
}

describe("Postline's OpenAPI document against Resend's 1.5.0", () => {
  const differences = compareDocuments(resend, openApiDocument() as never);
  const allowed = allowList(compatibilityPage);

  it('reads the allow-list, every entry with a reason', () => {
    expect(allowed.size).toBeGreaterThan(0);
    expect([...allowed].filter(([, reason]) => reason.length < 10)).toEqual([]);
  });

  it('serves every operation of Resend’s document', () => {
    expect(differences.filter((d) => d.kind === 'missing-operation').map((d) => d.operation)).toEqual([]);
  });

  it('differs only where docs/compatibility.md says why', () => {
    const unexplained = differences.filter((d) => !allowed.has(differenceKey(d)));
    expect(unexplained.map((d) => `${differenceKey(d)}  (${d.detail})`)).toEqual([]);
  });

  it('lists no difference that is gone', () => {
    const current = new Set(differences.map(differenceKey));
    expect([...allowed.keys()].filter((key) => !current.has(key))).toEqual([]);
  });
});

describe('the comparison', () => {
  const base = {
    paths: {
      '/things/{id}': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { id: { type: 'string' }, size: { type: 'integer' } } },
                },
              },
            },
          },
        },
      },
    },
  };

  it('finds a changed status, a renamed or retyped field, a new required field and a missing operation', () => {
    const ours = {
      paths: {
        '/things/{thing_id}': {
          get: {
            requestBody: {
              content: { 'application/json': { schema: { type: 'object', required: ['q'], properties: {} } } },
            },
            responses: {
              '201': {
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: {
                        ident: { type: 'string' },
                        size: { anyOf: [{ type: 'string' }, { type: 'null' }] },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    expect(compareDocuments(base, ours).map(differenceKey)).toEqual([
      'GET /things/{} | status | 200→201',
      'GET /things/{} | required-request-field | q',
      'GET /things/{} | response-field | id',
      'GET /things/{} | response-type | size',
      'GET /things/{} | response-field | ident',
    ]);
    expect(compareDocuments(base, { paths: {} }).map(differenceKey)).toEqual([
      'GET /things/{} | missing-operation | -',
    ]);
  });

  it('finds nothing between a document and itself', () => {
    expect(compareDocuments(base, base)).toEqual([]);
  });
});
