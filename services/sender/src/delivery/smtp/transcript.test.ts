import { describe, expect, it } from '@jest/globals';
import { createTranscript, transcriptLogger, type TranscriptSink } from './transcript.ts';

describe('transcripts', () => {
  it('keeps lines up to the bounds, cutting long lines and counting what it leaves out', () => {
    const transcript = createTranscript({ lines: 3, chars: 30, lineChars: 10 });
    transcript.add('C: EHLO a');
    transcript.add('S: 250-a very long reply line');
    transcript.add('S: 250 ok');
    transcript.add('C: MAIL FROM:<a@b>');
    transcript.add('C: QUIT');

    expect(transcript.read()).toEqual({ lines: ['C: EHLO a', 'S: 250-a …', 'S: 250 ok'], omitted: 2 });
  });

  it('stops at the character bound before the line bound', () => {
    const transcript = createTranscript({ lines: 100, chars: 12, lineChars: 100 });
    transcript.add('S: 220 hello');
    transcript.add('C: EHLO');

    expect(transcript.read()).toEqual({ lines: ['S: 220 hello'], omitted: 1 });
  });

  it("writes nodemailer's client and server lines to the sink's transcript, a line each, and nothing while detached", () => {
    const sink: TranscriptSink = { current: createTranscript() };
    const logger = transcriptLogger(sink) as { debug: (entry: object, message: string) => void };

    logger.debug({ tnx: 'server' }, '250-mx.test\n250 SIZE 1000');
    logger.debug({ tnx: 'client' }, 'QUIT');
    logger.debug({ tnx: 'network' }, 'Connection established');
    const kept = sink.current!;
    sink.current = undefined;
    logger.debug({ tnx: 'client' }, 'NOOP');

    expect(kept.read().lines).toEqual(['S: 250-mx.test', 'S: 250 SIZE 1000', 'C: QUIT']);
  });
});
