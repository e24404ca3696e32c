// A signup form's settings, for a new form or an existing one: its name, the segments and topics a person
// joins (chosen from the team's), the fields asked, double opt-in and its email, and what follows a submit.
import type { ApiRequest } from '@postline/contracts';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { Loading } from '../../ui/feedback.tsx';
import { useSegments, useTopics } from './queries.ts';
import type { SignupForm } from './forms.tsx';

type Settings = ApiRequest<'CreateFormBody'>;

/** The settings a submitted editor holds. */
function settingsOf(data: FormData): Settings {
  const optional = (name: string) => text(data, name).trim() || null;
  return {
    name: text(data, 'name'),
    segment_ids: data.getAll('segment').map(String),
    topic_ids: data.getAll('topic').map(String),
    fields: data.getAll('field').map(String) as ('first_name' | 'last_name')[],
    double_opt_in: data.get('double_opt_in') === 'on',
    from: optional('from'),
    subject: optional('subject'),
    redirect_url: optional('redirect_url'),
    thank_you_message: optional('thank_you_message'),
    enabled: data.get('enabled') === 'on',
  };
}

export function FormEditor({
  form,
  submitLabel,
  onSave,
}: {
  form?: SignupForm;
  submitLabel: string;
  onSave: (settings: Settings) => Promise<unknown>;
}) {
  const segments = useSegments();
  const topics = useTopics();
  if (segments.isPending || topics.isPending) return <Loading />;
  return (
    <ActionForm
      action={(data) => onSave(settingsOf(data))}
      submitLabel={submitLabel}
      label={form ? 'Form settings' : 'New form'}
    >
      <Field label="Name" hint="The form's heading, and its name in the confirmation email.">
        {(p) => <input {...p} name="name" required maxLength={100} defaultValue={form?.name ?? ''} />}
      </Field>
      <fieldset className="field">
        <legend>Add people to these segments</legend>
        {(segments.data?.data ?? []).length === 0 ? <p className="muted">The team has no segments yet.</p> : null}
        {(segments.data?.data ?? []).map((segment) => (
          <label key={segment.id}>
            <input
              type="checkbox"
              name="segment"
              value={segment.id}
              defaultChecked={form?.segment_ids.includes(segment.id) ?? false}
            />{' '}
            {segment.name}
          </label>
        ))}
      </fieldset>
      <fieldset className="field">
        <legend>Subscribe people to these topics</legend>
        {(topics.data?.data ?? []).length === 0 ? <p className="muted">The team has no topics yet.</p> : null}
        {(topics.data?.data ?? []).map((topic) => (
          <label key={topic.id}>
            <input
              type="checkbox"
              name="topic"
              value={topic.id}
              defaultChecked={form?.topic_ids.includes(topic.id) ?? false}
            />{' '}
            {topic.name}
          </label>
        ))}
      </fieldset>
      <fieldset className="field">
        <legend>Ask for (the email is always asked)</legend>
        <label>
          <input
            type="checkbox"
            name="field"
            value="first_name"
            defaultChecked={form?.fields.includes('first_name') ?? true}
          />{' '}
          First name (optional to fill in)
        </label>
        <label>
          <input
            type="checkbox"
            name="field"
            value="last_name"
            defaultChecked={form?.fields.includes('last_name') ?? false}
          />{' '}
          Last name (optional to fill in)
        </label>
      </fieldset>
      <div className="field checkbox">
        <label>
          <input type="checkbox" name="double_opt_in" defaultChecked={form?.double_opt_in ?? true} /> Double opt-in:
          people confirm their address by email before they become contacts
        </label>
      </div>
      <Field
        label="Confirmation email from"
        hint="An address on a verified domain of yours, such as News <news@example.com>. Needed with double opt-in."
      >
        {(p) => <input {...p} name="from" defaultValue={form?.from ?? ''} />}
      </Field>
      <Field label="Confirmation email subject" hint="Default: Confirm your subscription.">
        {(p) => <input {...p} name="subject" maxLength={200} defaultValue={form?.subject ?? ''} />}
      </Field>
      <Field label="Redirect after submitting" hint="An http(s) URL of yours. Leave empty to show the message below.">
        {(p) => <input {...p} name="redirect_url" type="url" defaultValue={form?.redirect_url ?? ''} />}
      </Field>
      <Field label="Thank-you message" hint="Shown after submitting when there is no redirect.">
        {(p) => (
          <textarea {...p} name="thank_you_message" maxLength={1000} defaultValue={form?.thank_you_message ?? ''} />
        )}
      </Field>
      <div className="field checkbox">
        <label>
          <input type="checkbox" name="enabled" defaultChecked={form?.enabled ?? true} /> Enabled: the form takes
          signups
        </label>
      </div>
    </ActionForm>
  );
}
