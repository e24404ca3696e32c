import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { BaseEnv, bool, commaList, ConfigError, parseEnv, port } from './config.ts';

const Env = BaseEnv.extend({ HTTP_PORT: port(3101), FEATURE: bool(false) });

describe('parseEnv', () => {
  it('applies defaults and freezes the result', () => {
    const env = parseEnv(Env, {});
    expect(env.HTTP_PORT).toBe(3101);
    expect(env.FEATURE).toBe(false);
    expect(env.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/postline');
    expect(Object.isFrozen(env)).toBe(true);
  });

  it('fails fast naming every bad variable', () => {
    expect(() => parseEnv(Env, { HTTP_PORT: 'eighty', FEATURE: 'yes' })).toThrow(ConfigError);
    try {
      parseEnv(Env, { HTTP_PORT: 'eighty', FEATURE: 'yes', DATABASE_URL: 'nope' });
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toContain('HTTP_PORT');
      expect(message).toContain('FEATURE');
      expect(message).toContain('DATABASE_URL');
    }
  });

  it("parses booleans only from 'true' and 'false'", () => {
    expect(parseEnv(z.object({ B: bool(false) }), { B: 'true' }).B).toBe(true);
    expect(() => parseEnv(z.object({ B: bool(false) }), { B: '1' })).toThrow(/B/);
  });

  it('reads a comma-separated list, trimmed, empty when unset', () => {
    const Env = z.object({ L: commaList() });
    expect(parseEnv(Env, { L: ' 127.0.0.1:53, [::1]:53 ,,' }).L).toEqual(['127.0.0.1:53', '[::1]:53']);
    expect(parseEnv(Env, {}).L).toEqual([]);
  });
});
