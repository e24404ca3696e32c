// The client's model of how the server splits the bytes it was sent into commands and messages.

export type Unit = { kind: 'command'; line: Buffer } | { kind: 'data'; bytes: Buffer };

const DATA_END = Buffer.from('\r\n.\r\n');

/**
 * What the server makes of the bytes sent: in command mode a line ends at LF (an optional CR before it is
 * dropped; a bare CR ends nothing), in data mode the message ends at the first CRLF.CRLF (or at once when it
 * starts with `.` CRLF). The mode turns to data when a 354 answers, so units are taken one reply at a time.
 */
export function createInputModel(): {
  append: (bytes: Buffer) => void;
  next: () => Unit | undefined;
  enterData: () => void;
  /** Forgets what is pending (plaintext the server drops at STARTTLS). */
  discard: () => void;
  mode: () => 'command' | 'data';
  pendingBytes: () => number;
} {
  let buffer: Buffer = Buffer.alloc(0);
  let mode: 'command' | 'data' = 'command';
  return {
    append(bytes) {
      buffer = Buffer.concat([buffer, bytes]);
    },
    next() {
      if (mode === 'command') {
        const lf = buffer.indexOf(0x0a);
        if (lf < 0) return undefined;
        const line = buffer.subarray(0, lf > 0 && buffer[lf - 1] === 0x0d ? lf - 1 : lf);
        buffer = buffer.subarray(lf + 1);
        return { kind: 'command', line };
      }
      const end = buffer.subarray(0, 3).equals(Buffer.from('.\r\n')) ? 3 : buffer.indexOf(DATA_END);
      if (end < 0) return undefined;
      const length = end === 3 && buffer[0] === 0x2e ? 3 : end + DATA_END.length;
      const bytes = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      mode = 'command';
      return { kind: 'data', bytes };
    },
    enterData() {
      mode = 'data';
    },
    discard() {
      buffer = Buffer.alloc(0);
    },
    mode: () => mode,
    pendingBytes: () => buffer.length,
  };
}
