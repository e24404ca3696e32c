import { z } from 'zod';

// The request bodies of signup forms (a Postline extension): the form resource, and what a person's browser
// posts to a hosted form. Re-exported by requests.ts, so that `ApiRequest<'CreateFormBody'>` names them.

/** The optional fields a form may ask besides the email (always asked, always required). */
export const FORM_FIELDS = ['first_name', 'last_name'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** The most segments, and topics, one form adds a contact to. */
export const FORM_TARGETS_MAX = 20;
export const FORM_NAME_MAX = 100;
export const FORM_SUBJECT_MAX = 200;
export const FORM_THANK_YOU_MAX = 1000;

const FormName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(FORM_NAME_MAX, `must be at most ${FORM_NAME_MAX} characters`);
const Ids = z.array(z.string()).max(FORM_TARGETS_MAX, `must name at most ${FORM_TARGETS_MAX}`);
const Fields = z.array(z.enum(FORM_FIELDS, { message: 'must be `first_name` or `last_name`' }));
const Subject = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(FORM_SUBJECT_MAX, `must be at most ${FORM_SUBJECT_MAX} characters`);
const RedirectUrl = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((value) => /^https?:\/\/[^\s]+$/i.test(value) && URL.canParse(value), 'must be an http(s) URL');
const ThankYou = z.string().trim().max(FORM_THANK_YOU_MAX, `must be at most ${FORM_THANK_YOU_MAX} characters`);

const formFields = {
  segment_ids: Ids.nullish().meta({ description: 'Segments a signed-up contact is added to.' }),
  topic_ids: Ids.nullish().meta({ description: 'Topics a signed-up contact is subscribed to (opt in).' }),
  fields: Fields.nullish().meta({ description: 'Optional fields asked besides the email.' }),
  double_opt_in: z
    .boolean()
    .nullish()
    .meta({ description: 'Default true: a confirmation email, and the contact only once confirmed.' }),
  from: z
    .string()
    .max(320)
    .nullish()
    .meta({ description: "The confirmation email's sender, on a verified domain of the team's." }),
  subject: Subject.nullish().meta({ description: "The confirmation email's subject." }),
  redirect_url: RedirectUrl.nullish().meta({ description: 'Where a person goes after submitting.' }),
  thank_you_message: ThankYou.nullish().meta({ description: 'Shown after submitting, without a redirect_url.' }),
  enabled: z.boolean().nullish(),
};

export const CreateFormBody = z.object({ name: FormName, ...formFields });
export const UpdateFormBody = z.object({ name: FormName.optional(), ...formFields });

/** What a hosted form posts: the address, the names it asks, the bot trap's honeypot and its render token. */
export const FormSubmission = z.object({
  email: z.string().meta({ description: 'Required.' }),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  website: z.string().optional().meta({ description: 'The honeypot: hidden from people, left empty by them.' }),
  rendered: z.string().optional().meta({ description: 'The signed token of when the hosted page was shown.' }),
});

/** The confirmation page's button posts nothing but itself. */
export const FormConfirmation = z.object({});
