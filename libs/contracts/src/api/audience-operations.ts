// The catalog's audience families: contacts, their imports, contact properties, segments (and audiences,
// their deprecated name) and topics.
import * as rq from './requests.ts';
import * as rs from './shapes.ts';
import { created, del, get, json, list, ok, patch, post, type Operation } from './operation.ts';

export const AUDIENCE_OPERATIONS: Operation[] = [
  // ---- Contacts ----
  post('/contacts', 'Contacts', 'Create a contact', {
    body: { schema: rq.CreateContactBody, required: true },
    success: created(rs.ref('contact')),
    errors: ['validation_error', 'missing_required_field', 'not_found'],
  }),
  list('/contacts', 'Contacts', 'List contacts', rs.ContactList, {
    query: rq.PaginationQuery.safeExtend(rq.ContactListQuery.shape),
    errors: ['validation_error', 'not_found'],
  }),
  get('/contacts/{id}', 'Contacts', 'Retrieve a contact', {
    params: { id: 'The contact id or email address.' },
    success: ok(rs.Contact),
    errors: ['not_found'],
  }),
  patch('/contacts/{id}', 'Contacts', 'Update a contact', {
    params: { id: 'The contact id or email address.' },
    body: json(rq.UpdateContactBody),
    success: ok(rs.ref('contact')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/contacts/{id}', 'Contacts', 'Delete a contact', {
    params: { id: 'The contact id or email address.' },
    success: ok(rs.DeletedContact),
    errors: ['not_found'],
  }),
  list('/contacts/{contact_id}/segments', 'Contacts', "List a contact's segments", rs.SegmentList, {
    errors: ['not_found', 'validation_error'],
  }),
  post('/contacts/{contact_id}/segments/{segment_id}', 'Contacts', 'Add a contact to a segment', {
    success: ok(rs.ContactSegmentAdded),
    errors: ['not_found'],
  }),
  del('/contacts/{contact_id}/segments/{segment_id}', 'Contacts', 'Remove a contact from a segment', {
    success: ok(rs.ContactSegmentRemoved),
    errors: ['not_found'],
  }),
  list('/contacts/{contact_id}/topics', 'Contacts', "List a contact's topic subscriptions", rs.ContactTopicList, {
    errors: ['not_found', 'validation_error'],
  }),
  patch('/contacts/{contact_id}/topics', 'Contacts', "Update a contact's topic subscriptions", {
    body: { schema: rq.UpdateContactTopicsBody, required: true },
    success: ok(rs.ref('contact_topics')),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),

  // ---- Contact imports ----
  post('/contacts/imports', 'Contact Imports', 'Import contacts from a CSV file', {
    body: { schema: rq.ContactImportForm, contentType: 'multipart/form-data', required: true },
    success: created(rs.ref('contact_import')),
    errors: ['validation_error', 'validation_error@400', 'validation_error@413', 'missing_required_field', 'not_found'],
  }),
  list('/contacts/imports', 'Contact Imports', 'List contact imports', rs.ContactImportList, {
    query: rq.PaginationQuery.safeExtend(rq.ContactImportListQuery.shape),
  }),
  get('/contacts/imports/{id}', 'Contact Imports', 'Retrieve a contact import', {
    success: ok(rs.ContactImport),
    errors: ['not_found'],
  }),

  // ---- Contact properties ----
  post('/contact-properties', 'Contact Properties', 'Create a contact property', {
    body: { schema: rq.CreateContactPropertyBody, required: true },
    success: created(rs.ref('contact_property')),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/contact-properties', 'Contact Properties', 'List contact properties', rs.ContactPropertyList, {
    query: rq.PaginationQuery.safeExtend(rq.AudienceCountsQuery.shape),
  }),
  get('/contact-properties/{id}', 'Contact Properties', 'Retrieve a contact property', {
    success: ok(rs.ContactProperty),
    errors: ['not_found'],
  }),
  patch('/contact-properties/{id}', 'Contact Properties', 'Update a contact property', {
    body: json(rq.UpdateContactPropertyBody),
    success: ok(rs.ref('contact_property')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/contact-properties/{id}', 'Contact Properties', 'Delete a contact property', {
    success: ok(rs.deleted('contact_property')),
    errors: ['not_found'],
  }),

  // ---- Segments and their deprecated name, audiences ----
  ...(['Segments', 'Audiences'] as const).flatMap((tag) => {
    const base = tag === 'Segments' ? '/segments' : '/audiences';
    const object = tag === 'Segments' ? 'segment' : 'audience';
    const deprecated = tag === 'Audiences';
    return [
      post(base, tag, `Create ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        body: { schema: rq.CreateSegmentBody, required: true },
        success: created(rs.createdSegment(object)),
        errors: ['validation_error', 'missing_required_field'],
      }),
      list(base, tag, `List ${tag.toLowerCase()}`, rs.CountedSegmentList, {
        deprecated,
        query: rq.PaginationQuery.safeExtend(rq.AudienceCountsQuery.shape),
      }),
      get(`${base}/{id}`, tag, `Retrieve ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        success: ok(rs.segment(object)),
        errors: ['not_found'],
      }),
      patch(`${base}/{id}`, tag, `Rename ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        extension: 'Renaming a segment is not in the published reference.',
        body: { schema: rq.RenameSegmentBody, required: true },
        success: ok(rs.ref(object)),
        errors: ['not_found', 'validation_error', 'missing_required_field'],
      }),
      del(`${base}/{id}`, tag, `Delete ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        success: ok(rs.deleted(object)),
        errors: ['not_found'],
      }),
      list(
        `${base}/{id}/contacts`,
        tag,
        `List the contacts of ${tag === 'Segments' ? 'a segment' : 'an audience'}`,
        rs.ContactList,
        {
          deprecated,
          errors: ['not_found', 'validation_error'],
        },
      ),
    ];
  }),
  post('/audiences/{id}/contacts', 'Audiences', 'Create a contact in an audience', {
    deprecated: true,
    body: { schema: rq.AudienceContactBody, required: true },
    success: created(rs.ref('contact')),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),
  get('/audiences/{id}/contacts/{contact_id}', 'Audiences', "Retrieve an audience's contact", {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    success: ok(rs.Contact),
    errors: ['not_found'],
  }),
  patch('/audiences/{id}/contacts/{contact_id}', 'Audiences', "Update an audience's contact", {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    body: json(rq.UpdateContactBody),
    success: ok(rs.ref('contact')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/audiences/{id}/contacts/{contact_id}', 'Audiences', 'Remove a contact from an audience', {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    success: ok(rs.DeletedContact),
    errors: ['not_found'],
  }),

  // ---- Topics ----
  post('/topics', 'Topics', 'Create a topic', {
    body: { schema: rq.CreateTopicBody, required: true },
    success: created(rs.ref('topic')),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/topics', 'Topics', 'List topics', rs.TopicList, {
    query: rq.PaginationQuery.safeExtend(rq.AudienceCountsQuery.shape),
  }),
  get('/topics/{id}', 'Topics', 'Retrieve a topic', { success: ok(rs.Topic), errors: ['not_found'] }),
  patch('/topics/{id}', 'Topics', 'Update a topic', {
    body: json(rq.UpdateTopicBody),
    success: ok(rs.ref('topic')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/topics/{id}', 'Topics', 'Delete a topic', { success: ok(rs.deleted('topic')), errors: ['not_found'] }),
];
