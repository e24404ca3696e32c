import { describe, expect, it } from '@jest/globals';
import { PUBLIC_EVENT_TYPES, publicEvents } from '@postline/contracts';
import { sampleEventData } from './sample-events.ts';

describe('test events', () => {
  it('has a sample of each of the 19 events, valid against its schema', () => {
    const at = new Date('2026-11-27T04:00:00.000Z');
    const invalid = PUBLIC_EVENT_TYPES.filter(
      (type) => !publicEvents[type].strict().safeParse(sampleEventData(type, at)).success,
    );
    expect(invalid).toEqual([]);
    expect(PUBLIC_EVENT_TYPES).toHaveLength(19);
  });
});
