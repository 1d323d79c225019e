package cron

// quirk names a form that Quartz 2.3.2 accepts but chronos rejects on
// purpose (docs/cron.md, "Deviations from Quartz"). The parser tags its
// SyntaxError with the quirk, so the oracle test can tell a deliberate
// rejection from a bug: a Quartz-valid expression that we reject without a
// quirk tag is a mismatch.
type quirk string

const (
	quirkExtraFields   quirk = "more than 7 fields (#1)"
	quirkLetterL       quirk = "L outside day-of-month/day-of-week (#2)"
	quirkTrailingJunk  quirk = "trailing junk after a number or name (#3)"
	quirkDroppedStep   quirk = "step after a name or name range (#4)"
	quirkDroppedSuffix quirk = "W/L/# after a range (#4)"
	quirkStepZero      quirk = "step 0 (#5)"
	quirkNthDay        quirk = "d#k with d outside 1-7 (#6)"
	quirkNthInList     quirk = "'#' in a list (#6)"
	quirkZeroW         quirk = "0W (#7)"
	quirkYearRange     quirk = "year outside 1970-2099 (#11)"
	quirkWeekdayInList quirk = "'W' in a list"
	quirkQuestionJunk  quirk = "'?' with other characters"
	quirkDOWZeroEnd    quirk = "day-of-week 0 as a range end"
)

// because tags e with q when parsing the Quartz dialect.
func (p *parser) because(e *SyntaxError, q quirk) *SyntaxError {
	if p.dialect == Quartz {
		e.quirk = q
	}
	return e
}
