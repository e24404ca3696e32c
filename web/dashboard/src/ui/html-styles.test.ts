import { describe, expect, it } from '@jest/globals';
import { splitStyles } from './html-styles.ts';

describe('splitStyles', () => {
  it('takes every <style> element out of the markup, in order, whatever its case and attributes', () => {
    const html =
      '<html><head><style type="text/css">h1 { color: red }</style></head>' +
      '<body><STYLE media="screen">\n p { margin: 0 }\n</STYLE><h1>Hi</h1><p style="color: blue">x</p></body></html>';
    expect(splitStyles(html)).toEqual({
      markup: '<html><head></head><body><h1>Hi</h1><p style="color: blue">x</p></body></html>',
      css: 'h1 { color: red }\n\n p { margin: 0 }\n',
    });
  });

  it('leaves markup without style sheets as it is', () => {
    expect(splitStyles('<p>Plain</p>')).toEqual({ markup: '<p>Plain</p>', css: '' });
  });
});
