import { describe, expect, it } from '@jest/globals';
import { SIGNUP_CONFIRM_PATH, SIGNUP_FORM_PATH, signupFormTeam } from '@postline/contracts';
import { confirmationUrl, createFormTokens, hostedFormUrl, newPublicId } from './form-tokens.ts';

const tokens = createFormTokens('a-test-secret-key-of-some-length');
const teamId = '0195f3a2-0000-7000-8000-000000000001';
const id = '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e';

describe('form tokens', () => {
  it('reads back what they signed, and nothing edited or of the other kind', () => {
    const renderedAt = new Date('2026-12-09T12:00:00.000Z');
    const render = tokens.render({ formId: id, renderedAt });
    expect(tokens.rendered(render)).toEqual({ formId: id, renderedAt });
    const expiresAt = new Date('2026-12-11T12:00:00.000Z');
    const confirm = tokens.confirmation({ teamId, signupId: id, expiresAt });
    expect(tokens.confirmed(confirm)).toEqual({ teamId, signupId: id, expiresAt });
    expect(tokens.confirmed(render)).toBeUndefined();
    expect(tokens.rendered(`${render.slice(0, -2)}AA`)).toBeUndefined();
    expect(createFormTokens('another-secret-key-of-some-len').confirmed(confirm)).toBeUndefined();
  });

  it('makes public ids and links of the shapes the gateway serves, naming the team', () => {
    const publicId = newPublicId(teamId);
    expect(newPublicId(teamId)).not.toBe(publicId);
    const page = new URL(hostedFormUrl('https://mail.example.com/', publicId)).pathname;
    expect(SIGNUP_FORM_PATH.test(page)).toBe(true);
    expect(signupFormTeam(page)).toBe(teamId);
    const token = tokens.confirmation({ teamId, signupId: id, expiresAt: new Date() });
    const link = new URL(confirmationUrl('https://mail.example.com', publicId, token)).pathname;
    expect(SIGNUP_CONFIRM_PATH.test(link)).toBe(true);
    expect(signupFormTeam(link)).toBe(teamId);
  });
});
