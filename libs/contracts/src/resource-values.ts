// Values of the public API's resources that the sender also stores as they are written: the columns of its
// tables take these types, and so do its rules, from this one place.

/** Contact property keys: letters, digits and underscores, 1 to 50, case-sensitive. */
export const PROPERTY_KEY = /^[A-Za-z0-9_]{1,50}$/;

/** A contact property's type. */
export type PropertyType = 'string' | 'number';

/** A contact's choice for a topic, and a topic's default. */
export type Subscription = 'opt_in' | 'opt_out';

/** A template variable's type. */
export type VariableType = 'string' | 'number';

/** A declared variable of a template version, with its own identity kept across edits. */
export type TemplateVariable = {
  id: string;
  key: string;
  type: VariableType;
  fallback_value: string | number | null;
  /** ISO 8601, as kept in the version's jsonb. */
  created_at: string;
  updated_at: string;
};
