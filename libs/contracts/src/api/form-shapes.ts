import { z } from 'zod';
import { ListEnvelope } from '../pagination.ts';
import { FORM_FIELDS } from './form-requests.ts';

// The response bodies of signup forms (a Postline extension). Re-exported by shapes.ts, so that
// `ApiShape<'Form'>` names them.

const FormItem = z.strictObject({
  id: z.string(),
  public_id: z.string().describe("The unguessable id in the form's hosted URL."),
  name: z.string(),
  segment_ids: z.array(z.string()),
  topic_ids: z.array(z.string()),
  fields: z.array(z.enum(FORM_FIELDS)),
  double_opt_in: z.boolean(),
  from: z.string().nullable(),
  subject: z.string().nullable(),
  redirect_url: z.string().nullable(),
  thank_you_message: z.string().nullable(),
  enabled: z.boolean(),
  hosted_url: z.string().describe('The hosted page, and the `action` of the embeddable snippet.'),
  embed_html: z.string().describe("A plain HTML form (the same fields and bot trap) to put on one's own site."),
  counts: z.strictObject({
    submissions: z.number().int().describe('Submits taken (those the bot trap caught are not counted).'),
    pending: z.number().int().describe('Addresses waiting for their confirmation.'),
    confirmed: z.number().int().describe('Addresses confirmed (or taken without double opt-in).'),
  }),
  created_at: z.string(),
  updated_at: z.string(),
});
export const FormList = ListEnvelope(FormItem);
export const Form = z.strictObject({ object: z.literal('form'), ...FormItem.shape });
