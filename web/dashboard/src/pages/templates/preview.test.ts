import { describe, expect, it } from '@jest/globals';
import { renderWithSamples, sampleValues, type VariableRow } from './preview.ts';

const rows: VariableRow[] = [
  { key: 'NAME', type: 'string', fallback: 'friend', sample: 'Ada <3' },
  { key: 'COUNT', type: 'number', fallback: '', sample: '3' },
  { key: '', type: 'string', fallback: 'x', sample: 'y' },
];

describe('the template preview', () => {
  it('renders the samples (escaped in HTML), typed as their variables', () => {
    expect(sampleValues(rows)).toEqual({ NAME: 'Ada <3', COUNT: 3 });
    expect(
      renderWithSamples(
        { html: '<p>{{{NAME}}} has {{{COUNT}}}</p>', text: '{{{NAME}}}', subject: 'Hi {{{NAME}}}' },
        rows,
      ),
    ).toEqual({ html: '<p>Ada &lt;3 has 3</p>', text: 'Ada <3', subject: 'Hi Ada <3', missing: [] });
  });

  it('shows the fallback when a sample is cleared, and names what has neither', () => {
    const cleared = rows.map((row) => ({ ...row, sample: '' }));
    expect(renderWithSamples({ html: '<p>{{{NAME}}} {{{COUNT}}}</p>', text: '', subject: '' }, cleared)).toEqual({
      html: '<p>friend </p>',
      text: null,
      subject: null,
      missing: ['COUNT'],
    });
  });
});
