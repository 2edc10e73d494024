import { describe, expect, it } from 'vitest';
import {
  TIME_ZONE_PATTERN,
  TimeZoneError,
  checkTimeZone,
  firstInstant,
  isTimeZone,
  offsetAt,
  wallTime,
} from '../../../machines/schedule/zone.ts';

const utc = (iso: string): number => Date.parse(iso);
const HOUR = 3_600_000;

describe('time zones', () => {
  it.each(['UTC', 'Etc/UTC', 'Europe/Berlin', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'])(
    'knows %s',
    (zone) => {
      expect(isTimeZone(zone)).toBe(true);
      expect(checkTimeZone(zone)).toBe(zone);
      expect(new RegExp(TIME_ZONE_PATTERN).test(zone)).toBe(true);
    },
  );

  it.each(['', 'Local', 'Mars/Olympus', 'Europe/Berlinn', '+01:00', 'UTC+1', ' UTC', 'Europe/Berlin '])(
    'refuses %j with a message that says what a time zone is',
    (zone) => {
      expect(isTimeZone(zone)).toBe(false);
      let error: unknown;
      try {
        checkTimeZone(zone);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TimeZoneError);
      expect((error as TimeZoneError).code).toBe('ERR_TIME_ZONE');
      expect((error as TimeZoneError).timeZone).toBe(zone);
      expect((error as TimeZoneError).message).toMatch(zone === '' ? /^timeZone is empty/ : /IANA time zone name/);
    },
  );

  it('says what is wrong in words', () => {
    expect(() => checkTimeZone('Mars/Olympus')).toThrow(
      'timeZone "Mars/Olympus" is not an IANA time zone name (such as UTC, Europe/Berlin or America/New_York)',
    );
  });
});

describe('wall-clock time', () => {
  it('reads the fields of the zone, seconds and milliseconds kept', () => {
    expect(wallTime('Europe/Berlin', utc('2024-01-10T08:00:05.250Z'))).toBe(utc('2024-01-10T09:00:05.250Z'));
    expect(wallTime('Asia/Kathmandu', utc('2024-01-10T00:00:00Z'))).toBe(utc('2024-01-10T05:45:00Z'));
    expect(offsetAt('America/New_York', utc('2024-07-01T00:00:00Z'))).toBe(-4 * HOUR);
    expect(offsetAt('America/New_York', utc('2024-12-01T00:00:00Z'))).toBe(-5 * HOUR);
  });

  it('midnight reads 00, not 24', () => {
    expect(wallTime('UTC', utc('2024-01-10T00:00:00Z'))).toBe(utc('2024-01-10T00:00:00Z'));
  });

  it('a wall time the zone skips has no instant', () => {
    expect(firstInstant('Europe/Berlin', utc('2024-03-31T02:30:00Z'))).toBeNull();
    expect(firstInstant('America/New_York', utc('2024-03-10T02:00:00Z'))).toBeNull();
    expect(firstInstant('Australia/Lord_Howe', utc('2024-10-06T02:15:00Z'))).toBeNull();
    // Samoa skipped 30 December 2011 whole.
    expect(firstInstant('Pacific/Apia', utc('2011-12-30T12:00:00Z'))).toBeNull();
  });

  it('a wall time the zone repeats gives its first instant', () => {
    expect(firstInstant('Europe/Berlin', utc('2024-10-27T02:30:00Z'))).toBe(utc('2024-10-27T00:30:00Z'));
    expect(firstInstant('America/New_York', utc('2024-11-03T01:00:00Z'))).toBe(utc('2024-11-03T05:00:00Z'));
  });

  it('the edges of the change', () => {
    expect(firstInstant('Europe/Berlin', utc('2024-03-31T01:59:00Z'))).toBe(utc('2024-03-31T00:59:00Z'));
    expect(firstInstant('Europe/Berlin', utc('2024-03-31T03:00:00Z'))).toBe(utc('2024-03-31T01:00:00Z'));
    expect(firstInstant('Europe/Berlin', utc('2024-10-27T03:00:00Z'))).toBe(utc('2024-10-27T02:00:00Z'));
    expect(firstInstant('Pacific/Apia', utc('2011-12-31T00:00:00Z'))).toBe(utc('2011-12-30T10:00:00Z'));
  });
});
