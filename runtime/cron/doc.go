// Package cron parses cron expressions and computes their fire times. It is
// the single source of truth for "when" in chronos: the generator validates
// //chronos:schedule directives with it at go generate time, and the
// scheduler fires with it. It has no dependencies beyond the standard
// library.
//
// Two dialects are accepted, chosen by the shape of the expression:
//
//   - Quartz, 6 or 7 fields: sec min hour day-of-month month day-of-week
//     [year], with ? L W # and the semantics of Quartz 2.3.2's
//     CronExpression. "0 0 1 L * ?" is 01:00 on the last day of every month.
//   - Standard (Vixie) cron, 5 fields: min hour day-of-month month
//     day-of-week, plus @yearly, @annually, @monthly, @weekly, @daily,
//     @midnight and @hourly. "0 1 * * 1-5" is 01:00 Monday to Friday.
//
// # Day-of-week numbering differs between the dialects
//
// In a 6- or 7-field (Quartz) expression day-of-week 1 is SUNDAY and 7 is
// Saturday, so MON-FRI is 2-6. In a 5-field expression 0 and 7 are Sunday
// and MON-FRI is 1-5. The same digits mean different days: "0 0 9 ? * 1-5"
// runs Sunday to Thursday. Write day names (MON-FRI) to avoid the trap. A
// Quartz day-of-week of 0 is rejected with a message that explains the
// numbering.
//
// # Time zones and daylight saving time
//
// A Schedule evaluates an expression in a time zone (UTC by default; use
// LoadLocation for IANA names). Next works on wall-clock fields, as Quartz
// does: a wall time that a spring-forward change skips does not fire
// (DSTShiftGap runs it at the end of the gap instead), and a wall time that
// a fall-back change repeats fires once, at the later instant. Both
// dialects follow these rules.
//
// # Strictness
//
// Parse rejects forms that Quartz silently misreads, such as trailing junk
// ("5X", "MONDAY"), steps after names ("MON/2"), a step of 0, "W" or "L"
// after a range, "#" in a list and years outside 1970-2099. Every error is a
// *SyntaxError that names the field and the byte offset of the bad token.
// Next never searches past the end of 2199, so it always returns promptly;
// the zero time means "never".
//
// docs/cron.md in the repository describes both dialects in full, with
// every deviation from Quartz 2.3.2 and from robfig/cron.
package cron
