import { describe, expect, it } from '@jest/globals';
import { embedSnippet, renderFormPage } from './form-pages.ts';

describe('the hosted form', () => {
  it('escapes what the team and the visitor wrote, and marks a field to correct', () => {
    const html = renderFormPage({
      name: '<b>News</b>',
      asked: ['first_name'],
      token: 't.k',
      values: { email: '"><script>', first_name: 'Ada' },
      errors: { email: 'Enter an email address such as name@example.com.' },
    });
    expect(html).toContain('<h1>&lt;b&gt;News&lt;/b&gt;</h1>');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;"');
    expect(html).not.toContain('<script>');
    expect(html).toContain('aria-invalid="true" aria-describedby="email-error"');
    expect(html).toContain('<label for="first_name">First name (optional)</label>');
    expect(html).toContain('name="website" type="text" tabindex="-1"');
    expect(html).toContain('<input type="hidden" name="rendered" value="t.k">');
  });

  it('gives a snippet that posts the same fields and honeypot to the hosted page', () => {
    const snippet = embedSnippet('https://mail.example.com/f/abc', ['last_name']);
    expect(snippet).toContain('<form action="https://mail.example.com/f/abc" method="post"');
    expect(snippet).toContain('name="email" type="email" autocomplete="email" required');
    expect(snippet).toContain('name="last_name"');
    expect(snippet).not.toContain('name="first_name"');
    expect(snippet).toContain('name="website"');
  });
});
