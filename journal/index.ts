/** The journal's public surface: the write-ahead Journal, its timeline printer and CLI, redaction. */
export { Journal, DEFAULT_RETAIN_STEPS } from './journal.ts';
export { moveAside, openReplacingDamaged, type ReplacedJournal } from './damaged.ts';
export { JournalError, JournalLockedError, isDamage, isJournalError } from './errors.ts';
export type { JournalErrorCode } from './errors.ts';
export { exactJson, redact, redactReport, redactText, redactedJson, isSecretKey, REDACTED } from './redact.ts';
export { TimelineFormatter, formatTimeline, compact } from './timeline.ts';
export type { TimelineFormat, Cause } from './timeline.ts';
export { runJournalCommand, JOURNAL_USAGE } from './cli.ts';
export type { CommandIO, JournalCommandOptions } from './cli.ts';
export { SCHEMA_VERSION } from './schema.ts';
export { stateName } from './_rows.ts';
export type * from './types.ts';
