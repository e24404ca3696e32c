// The form that creates or edits an endpoint: its URL and the events it receives, picked by family (each
// family and the whole list with a select-all box, which shows "mixed" when only some are picked).
import { useEffect, useId, useRef, useState } from 'react';
import type { PublicEventType } from '@postline/contracts';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ALL_EVENTS, EVENT_FAMILIES } from './events.ts';

export type EndpointInput = { endpoint: string; events: PublicEventType[] };

export function EndpointForm({
  initial,
  submitLabel,
  label,
  onSubmit,
  onCancel,
}: {
  initial?: { endpoint: string; events: readonly string[] };
  submitLabel: string;
  label: string;
  onSubmit: (input: EndpointInput) => Promise<unknown>;
  onCancel: () => void;
}) {
  const [picked, setPicked] = useState<Set<string>>(() => new Set(initial?.events ?? []));
  const submit = async (data: FormData) => {
    // The API says what is wrong with an empty list; the page does not second-guess it.
    await onSubmit({ endpoint: text(data, 'endpoint'), events: ALL_EVENTS.filter((e) => picked.has(e)) });
  };
  return (
    <ActionForm action={submit} submitLabel={submitLabel} label={label} onCancel={onCancel}>
      <Field label="Endpoint URL" hint="Postline POSTs each event here, signed with the endpoint's secret.">
        {(p) => (
          <input
            {...p}
            name="endpoint"
            type="url"
            required
            placeholder="https://example.com/webhooks"
            defaultValue={initial?.endpoint}
          />
        )}
      </Field>
      <EventPicker picked={picked} onChange={setPicked} />
    </ActionForm>
  );
}

function EventPicker({ picked, onChange }: { picked: Set<string>; onChange: (next: Set<string>) => void }) {
  const setMany = (names: readonly string[], on: boolean) => {
    const next = new Set(picked);
    for (const name of names) {
      if (on) next.add(name);
      else next.delete(name);
    }
    onChange(next);
  };
  return (
    <fieldset className="event-picker">
      <legend>Events</legend>
      <p className="hint">
        {picked.size} of {ALL_EVENTS.length} events selected.
      </p>
      <SelectAll label="All events" names={ALL_EVENTS} picked={picked} onToggle={setMany} />
      {EVENT_FAMILIES.map((family) => (
        <fieldset key={family.family} className="event-family">
          <legend>{family.family} events</legend>
          <SelectAll
            label={`All ${family.family.toLowerCase()} events`}
            names={family.events}
            picked={picked}
            onToggle={setMany}
          />
          <div className="checks">
            {family.events.map((name) => (
              <label key={name}>
                <input type="checkbox" checked={picked.has(name)} onChange={(e) => setMany([name], e.target.checked)} />{' '}
                <code>{name}</code>
              </label>
            ))}
          </div>
        </fieldset>
      ))}
    </fieldset>
  );
}

function SelectAll({
  label,
  names,
  picked,
  onToggle,
}: {
  label: string;
  names: readonly string[];
  picked: Set<string>;
  onToggle: (names: readonly string[], on: boolean) => void;
}) {
  const ref = useRef<HTMLInputElement>(null);
  const id = useId();
  const count = names.filter((n) => picked.has(n)).length;
  const all = count === names.length;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = count > 0 && !all;
  }, [count, all]);
  return (
    <div className="select-all">
      <input ref={ref} id={id} type="checkbox" checked={all} onChange={(e) => onToggle(names, e.target.checked)} />{' '}
      <label htmlFor={id}>{label}</label>
    </div>
  );
}
