import { describe, expect, it } from '@jest/globals';
import { inlineImages } from './inline-images.ts';

const logo = { contentId: '<Logo@X.test>', contentType: 'image/png; name=logo.png', content: Buffer.from('png') };

describe('inlineImages', () => {
  it('replaces cid: references to inline parts with data: URIs, whatever their case or brackets', () => {
    expect(inlineImages('<img src="cid:logo@x.test"><img src=\'CID:LOGO@X.TEST\'>', [logo])).toBe(
      `<img src="data:image/png;base64,${Buffer.from('png').toString('base64')}"><img src='data:image/png;base64,cG5n'>`,
    );
  });

  it('leaves a reference to no part as it is', () => {
    expect(inlineImages('<img src="cid:missing@x.test">', [logo])).toBe('<img src="cid:missing@x.test">');
    expect(inlineImages('<p>no parts</p>', [])).toBe('<p>no parts</p>');
  });
});
