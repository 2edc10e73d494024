import { describe, expect, it } from 'vitest';
import { CRON_PATTERN, CronError, parseCron, type Cron, type CronField } from '../../../machines/schedule/cron.ts';

const range = (lo: number, hi: number, step = 1): number[] => {
  const out: number[] = [];
  for (let v = lo; v <= hi; v += step) out.push(v);
  return out;
};
const fields = (c: Cron) => [c.minutes, c.hours, c.daysOfMonth, c.months, c.daysOfWeek];

describe('parseCron: fields', () => {
  it.each([
    ['* * * * *', [range(0, 59), range(0, 23), range(1, 31), range(1, 12), range(0, 6)]],
    ['0 3 * * *', [[0], [3], range(1, 31), range(1, 12), range(0, 6)]],
    ['*/5 * * * *', [range(0, 55, 5), range(0, 23), range(1, 31), range(1, 12), range(0, 6)]],
    ['10-50/10 */6 * * *', [[10, 20, 30, 40, 50], [0, 6, 12, 18], range(1, 31), range(1, 12), range(0, 6)]],
    ['5,1,3,1 0 1,15 * *', [[1, 3, 5], [0], [1, 15], range(1, 12), range(0, 6)]],
    ['0-4,50-59/3 * * * *', [[0, 1, 2, 3, 4, 50, 53, 56, 59], range(0, 23), range(1, 31), range(1, 12), range(0, 6)]],
    ['07 09 * * *', [[7], [9], range(1, 31), range(1, 12), range(0, 6)]],
  ])('%s', (text, expected) => {
    expect(fields(parseCron(text))).toEqual(expected);
  });

  it('N/step runs from N to the end of the field, as in Kubernetes', () => {
    expect(parseCron('5/15 * * * *').minutes).toEqual([5, 20, 35, 50]);
    expect(parseCron('0 0 * * 1/2').daysOfWeek).toEqual([1, 3, 5]);
    expect(parseCron('0 0 25/3 * *').daysOfMonth).toEqual([25, 28, 31]);
  });

  it('a step larger than the range keeps only its start', () => {
    expect(parseCron('*/90 * * * *').minutes).toEqual([0]);
    expect(parseCron('0 0 * 3-5/12 *').months).toEqual([3]);
  });

  it('month and weekday names, in any case, alone, in ranges and in lists', () => {
    expect(parseCron('0 0 * JAN,mar,Dec *').months).toEqual([1, 3, 12]);
    expect(parseCron('0 0 * feb-APR *').months).toEqual([2, 3, 4]);
    expect(parseCron('0 0 * * MON-FRI').daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('0 0 * * sun,Sat').daysOfWeek).toEqual([0, 6]);
    expect(parseCron('0 0 * JAN-DEC/3 *').months).toEqual([1, 4, 7, 10]);
    expect(parseCron('0 0 * * mon-5').daysOfWeek).toEqual([1, 2, 3, 4, 5]);
  });

  it('0 and 7 are both Sunday', () => {
    expect(parseCron('0 0 * * 7').daysOfWeek).toEqual([0]);
    expect(parseCron('0 0 * * 0,7').daysOfWeek).toEqual([0]);
    expect(parseCron('0 0 * * 5-7').daysOfWeek).toEqual([0, 5, 6]);
    expect(parseCron('0 0 * * FRI-7').daysOfWeek).toEqual([0, 5, 6]);
    expect(parseCron('0 0 * * 7/2').daysOfWeek).toEqual([0]);
  });

  it.each([
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
    ['@monthly', '0 0 1 * *'],
    ['@weekly', '0 0 * * 0'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@hourly', '0 * * * *'],
  ])('macro %s is %s', (macro, same) => {
    const parsed = parseCron(macro);
    expect(parsed.source).toBe(macro);
    expect({ ...parsed, source: same }).toEqual(parseCron(same));
  });

  it('whitespace: tabs and runs of spaces separate fields, ends are trimmed', () => {
    expect(fields(parseCron('  0\t3   *  * *\t'))).toEqual(fields(parseCron('0 3 * * *')));
    expect(parseCron(' @daily ').source).toBe('@daily');
  });

  it('is plain data that survives JSON', () => {
    const c = parseCron('*/15 9-17 * * MON-FRI');
    expect(JSON.parse(JSON.stringify(c))).toEqual(c);
  });
});

describe('parseCron: restricted day fields', () => {
  it.each([
    ['0 0 * * *', false, false],
    ['0 0 1 * *', true, false],
    ['0 0 * * MON', false, true],
    ['0 0 1-31 * *', true, false],
    ['0 0 */1 * */1', false, false],
    // robfig/cron and so Kubernetes: a step other than 1 restricts the field.
    ['0 0 */2 * *', true, false],
    ['0 0 * * */2', false, true],
    ['0 0 *,5 * 1,*', false, false],
  ])('%s: day-of-month restricted %s, day-of-week restricted %s', (text, dom, dow) => {
    const c = parseCron(text);
    expect([c.dayOfMonthRestricted, c.dayOfWeekRestricted]).toEqual([dom, dow]);
  });
});

describe('parseCron: warnings', () => {
  it.each([
    ['0 0 30 2 *', 'never fires: day-of-month "30" does not occur in month "2"'],
    ['0 0 31 2,4,6,9,11 *', 'never fires: day-of-month "31" does not occur in month "2,4,6,9,11"'],
    ['0 0 29 2 *', 'fires only in leap years (on February 29)'],
    ['0 0 29-31 FEB *', 'fires only in leap years (on February 29)'],
    [
      '0 0 1-7 * MON',
      'day-of-month "1-7" and day-of-week "MON" are both restricted, so it fires on days matching either',
    ],
    [
      '0 0 30 2 SUN',
      'day-of-month "30" and day-of-week "SUN" are both restricted, so it fires on days matching either',
    ],
  ])('%s', (text, warning) => {
    expect(parseCron(text).warnings).toEqual([warning]);
  });

  it.each(['0 0 * * *', '0 0 31 * *', '0 0 * 2 *', '0 0 28-29 2 *', '@weekly'])('%s: none', (text) => {
    expect(parseCron(text).warnings).toEqual([]);
  });
});

describe('parseCron: errors name the field and the token', () => {
  it.each<[string, CronField | null, string, string]>([
    ['', null, '', 'schedule is empty: write five fields, such as "0 3 * * *", or @daily'],
    ['   ', null, '   ', 'schedule is empty: write five fields, such as "0 3 * * *", or @daily'],
    [
      '* * * *',
      null,
      '* * * *',
      'schedule "* * * *": 4 fields where cron needs 5 (minute hour day-of-month month day-of-week) or a macro such as @daily',
    ],
    [
      '0 * * * * *',
      null,
      '0 * * * * *',
      'schedule "0 * * * * *": 6 fields where cron needs 5 (minute hour day-of-month month day-of-week) or a macro such as @daily; a seconds field is not supported',
    ],
    [
      '@every 5m',
      null,
      '@every',
      'schedule "@every 5m": "@every" is not a macro: use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly',
    ],
    ['@DAILY', null, '@DAILY', 'schedule "@DAILY": "@DAILY" is not a macro'],
    ['@daily 5', null, '@daily 5', 'schedule "@daily 5": "@daily" takes no fields after it'],
    [
      'TZ=UTC 0 * * * *',
      null,
      'TZ=UTC',
      'schedule "TZ=UTC 0 * * * *": "TZ=UTC" names a time zone: set timeZone instead',
    ],
    ['CRON_TZ=Europe/Berlin 0 3 * * *', null, 'CRON_TZ=Europe/Berlin', 'names a time zone: set timeZone instead'],
    ['60 * * * *', 'minute', '60', 'schedule "60 * * * *": minute "60" is out of range 0-59'],
    ['0 24 * * *', 'hour', '24', 'hour "24" is out of range 0-23'],
    ['0 0 0 * *', 'day-of-month', '0', 'day-of-month "0" is out of range 1-31'],
    ['0 0 32 * *', 'day-of-month', '32', 'day-of-month "32" is out of range 1-31'],
    ['0 0 * 13 *', 'month', '13', 'month "13" is out of range 1-12'],
    ['0 0 * 0 *', 'month', '0', 'month "0" is out of range 1-12'],
    ['0 0 * * 8', 'day-of-week', '8', 'day-of-week "8" is out of range 0-7'],
    ['0 0 * FOO *', 'month', 'FOO', 'month "FOO" is not a number 1-12 or a name JAN-DEC'],
    ['0 0 * * FUN', 'day-of-week', 'FUN', 'day-of-week "FUN" is not a number 0-7 or a name SUN-SAT'],
    ['0 0 * * MONDAY', 'day-of-week', 'MONDAY', 'day-of-week "MONDAY" is not a number 0-7 or a name SUN-SAT'],
    ['0 0 * MON *', 'month', 'MON', 'month "MON" is not a number 1-12 or a name JAN-DEC'],
    ['0 MON * * *', 'hour', 'MON', 'hour "MON" is not a number 0-23'],
    ['0 0 JAN * *', 'day-of-month', 'JAN', 'day-of-month "JAN" is not a number 1-31'],
    ['-5 * * * *', 'minute', '-5', 'minute "-5" is not a value or a range N-M'],
    ['0 0 1- * *', 'day-of-month', '1-', 'day-of-month "1-" is not a value or a range N-M'],
    ['1.5 * * * *', 'minute', '1.5', 'minute "1.5" is not a number 0-59'],
    ['*/0 * * * *', 'minute', '0', 'minute step "0" in "*/0" is not a whole number of 1 or more'],
    ['*/x * * * *', 'minute', 'x', 'minute step "x" in "*/x" is not a whole number of 1 or more'],
    ['*/ * * * *', 'minute', '', 'minute step "" in "*/" is not a whole number of 1 or more'],
    ['*/5/2 * * * *', 'minute', '*/5/2', 'minute "*/5/2" has more than one "/"'],
    ['/5 * * * *', 'minute', '/5', 'minute "/5" has no value before "/"'],
    ['1,,2 * * * *', 'minute', '1,,2', 'minute "1,,2" has an empty list item'],
    ['0 1, * * *', 'hour', '1,', 'hour "1," has an empty list item'],
    ['0 1-2-3 * * *', 'hour', '1-2-3', 'hour "1-2-3" is not a value or a range N-M'],
    [
      '0 0 * * FRI-MON',
      'day-of-week',
      'FRI-MON',
      'range "FRI-MON" runs backwards: wrap-around ranges are not supported',
    ],
    ['0 22-2 * * *', 'hour', '22-2', 'hour range "22-2" runs backwards'],
    ['0 0 ? * *', 'day-of-month', '?', 'day-of-month "?" is not supported: use "*"'],
    ['0 0 1 * L', 'day-of-week', 'L', 'day-of-week "L" is not a number 0-7 or a name SUN-SAT'],
  ])('%j', (text, field, token, message) => {
    let error: unknown;
    try {
      parseCron(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CronError);
    const e = error as CronError;
    expect([e.field, e.token, e.code, e.name]).toEqual([field, token, 'ERR_CRON', 'CronError']);
    expect(e.message).toContain(message);
  });
});

describe('CRON_PATTERN: the CRD refuses obvious garbage', () => {
  const pattern = new RegExp(CRON_PATTERN);

  it.each([
    '* * * * *',
    '*/5 * * * *',
    '10-50/10 0-4,22 1,15 JAN-mar mon-FRI',
    ' 0\t3 * * 7 ',
    '0 0 * * 1\n',
    '@daily',
    '@annually',
    '5/15 * * * *',
  ])('accepts what parseCron accepts: %j', (text) => {
    expect(() => parseCron(text)).not.toThrow();
    expect(pattern.test(text)).toBe(true);
  });

  it.each(['', '* * * *', '* * * * * *', '@every 5m', '@DAILY', '0 0 ? * *', 'rm -rf /', '0 0 1 * L#2'])(
    'refuses %j, which parseCron refuses too',
    (text) => {
      expect(pattern.test(text)).toBe(false);
      expect(() => parseCron(text)).toThrow(CronError);
    },
  );

  it('leaves the rest to parseCron', () => {
    expect(pattern.test('99 * * * *')).toBe(true);
    expect(() => parseCron('99 * * * *')).toThrow('minute "99" is out of range 0-59');
  });
});
