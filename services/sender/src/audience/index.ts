export { createImportContactsConsumer } from './consumers/import-contacts.ts';
export { findPropertyDefinitions } from './db/contact-properties.ts';
export { findContact } from './db/contacts.ts';
export { findSegment } from './db/segments.ts';
export {
  findTopicSubscriptions,
  markTopicSuppressed,
  type TopicLookup,
  type TopicQuestion,
  type TopicSubscriptions,
  type TopicSuppressedRecipient,
} from './db/topic-recipients.ts';
export { findSegmentIds } from './db/segments.ts';
export { type ContactTopicRow, findTopic, findTopicIds, listTopicsOfContact } from './db/topics.ts';
export {
  contactEmail,
  effectiveSubscription,
  type PropertyDefinition,
  type SubscriptionChoice,
} from './domain/contacts.ts';
export { contactForms, type TopicOptOut, topicOptOuts, withoutOptOuts } from './domain/topic-sends.ts';
export { audienceRoutes } from './http/routes.ts';
export { addSignedUpContact, applySubscriptionChoices } from './use-cases/contacts.ts';
export { requireSegment } from './use-cases/segments.ts';
