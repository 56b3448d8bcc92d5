import { describe, expect, it } from 'vitest';
import { DEFAULT_ZSTD_LEVEL } from '../../lib/codec/segment.js';
import { readConfig } from '../../lib/config.js';

describe('reading the configuration', () => {
  it('uses the documented defaults when nothing is set', () => {
    const c = readConfig({}, { auth: 'jwt' });
    // The codec's default and the configuration's are one choice (segment.ts says why 1).
    expect(DEFAULT_ZSTD_LEVEL).toBe(1);
    expect(c).toMatchObject({
      zstdLevel: DEFAULT_ZSTD_LEVEL,
      auth: 'jwt',
      maxBodyBytes: 5 * 1024 * 1024,
      maxMessageBytes: 4 * 1024 * 1024,
      maxResponseBytes: 5 * 1024 * 1024,
    });
    expect(c.jwt.tenantClaim).toBe('tenant');
  });

  it('lets QUEEN_AUTH switch auth off or on explicitly', () => {
    expect(readConfig({ QUEEN_AUTH: 'none' }, { auth: 'jwt' }).auth).toBe('none');
    expect(readConfig({ QUEEN_AUTH: 'jwt' }, { auth: 'none' }).auth).toBe('jwt');
  });

  it('refuses an unknown QUEEN_AUTH rather than silently falling back', () => {
    expect(() => readConfig({ QUEEN_AUTH: 'JWT' }, { auth: 'none' })).toThrow(/QUEEN_AUTH must be "jwt" or "none"/);
  });

  it('reads QUEEN_PREPARED_STATEMENTS as on (the default) or off, and refuses anything else', () => {
    expect(readConfig({}, { auth: 'none' }).preparedStatements).toBe(true);
    expect(readConfig({ QUEEN_PREPARED_STATEMENTS: 'on' }, { auth: 'none' }).preparedStatements).toBe(true);
    expect(readConfig({ QUEEN_PREPARED_STATEMENTS: 'off' }, { auth: 'none' }).preparedStatements).toBe(false);
    expect(() => readConfig({ QUEEN_PREPARED_STATEMENTS: 'false' }, { auth: 'none' })).toThrow(/must be "on" or "off"/);
  });

  it('lifts the endpoint rules only for QUEEN_DELIVERY_ALLOW_PRIVATE=1, and refuses a value it might misread', () => {
    expect(readConfig({}, { auth: 'none' }).deliveryAllowPrivate).toBe(false);
    expect(readConfig({ QUEEN_DELIVERY_ALLOW_PRIVATE: '0' }, { auth: 'none' }).deliveryAllowPrivate).toBe(false);
    expect(readConfig({ QUEEN_DELIVERY_ALLOW_PRIVATE: '1' }, { auth: 'none' }).deliveryAllowPrivate).toBe(true);
    expect(() => readConfig({ QUEEN_DELIVERY_ALLOW_PRIVATE: 'true' }, { auth: 'none' })).toThrow(
      /QUEEN_DELIVERY_ALLOW_PRIVATE must be "1" or "0", got "true"/,
    );
  });

  it('refuses a limit that is not a non-negative integer', () => {
    expect(() => readConfig({ QUEEN_MAX_BODY_BYTES: '5MB' }, { auth: 'none' })).toThrow(/QUEEN_MAX_BODY_BYTES/);
  });
});
