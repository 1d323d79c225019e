package gen

import (
	"cmp"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// Severity says whether a Diagnostic stops generation.
type Severity int

const (
	// Error diagnostics stop generation: nothing is written.
	Error Severity = iota
	// Warning diagnostics are printed but do not stop generation.
	Warning
)

// A Diagnostic is a problem found in the input, at a source position.
type Diagnostic struct {
	Pos      token.Position
	Severity Severity
	Code     string // short stable category, such as "unknown-key" or "bad-cron"
	Msg      string
	Related  []Related // further positions, such as "first defined here"
}

// Related is a secondary position attached to a Diagnostic.
type Related struct {
	Pos token.Position
	Msg string
}

// Error formats d as file:line:col: message, the form editors and CI
// annotate.
func (d Diagnostic) Error() string { return d.Format("") }

// Format renders d with file names relative to dir (when dir is not empty
// and the file lies under it). Related positions follow on lines indented
// with a tab.
func (d Diagnostic) Format(dir string) string {
	var b strings.Builder
	b.WriteString(formatPos(d.Pos, dir))
	b.WriteString(": ")
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Msg)
	for _, r := range d.Related {
		fmt.Fprintf(&b, "\n\t%s: %s", formatPos(r.Pos, dir), r.Msg)
	}
	return b.String()
}

func formatPos(p token.Position, dir string) string {
	if dir != "" && filepath.IsAbs(p.Filename) {
		if rel, err := filepath.Rel(dir, p.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			p.Filename = rel
		}
	}
	p.Filename = filepath.ToSlash(p.Filename)
	return p.String()
}

// Diagnostics is a list of diagnostics in source order.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// Error joins every diagnostic, one per line.
func (ds Diagnostics) Error() string { return ds.Format("") }

// Format renders every diagnostic with file names relative to dir.
func (ds Diagnostics) Format(dir string) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Format(dir))
		b.WriteByte('\n')
	}
	return b.String()
}

// sort orders diagnostics by file, line, column, then message, and drops
// exact duplicates, so output is deterministic.
func (ds Diagnostics) sort() Diagnostics {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	return slices.CompactFunc(ds, func(a, b Diagnostic) bool {
		return a.Pos == b.Pos && a.Msg == b.Msg
	})
}

// reporter collects diagnostics against one file set.
type reporter struct {
	fset  *token.FileSet
	diags Diagnostics
}

func (r *reporter) errorf(pos token.Pos, code, format string, args ...any) {
	r.add(pos, Error, code, format, args...)
}

func (r *reporter) warnf(pos token.Pos, code, format string, args ...any) {
	r.add(pos, Warning, code, format, args...)
}

func (r *reporter) add(pos token.Pos, sev Severity, code, format string, args ...any) {
	r.diags = append(r.diags, Diagnostic{
		Pos:      r.fset.Position(pos),
		Severity: sev,
		Code:     code,
		Msg:      fmt.Sprintf(format, args...),
	})
}

// related attaches a secondary position to the last diagnostic added.
func (r *reporter) related(pos token.Pos, msg string) {
	d := &r.diags[len(r.diags)-1]
	d.Related = append(d.Related, Related{Pos: r.fset.Position(pos), Msg: msg})
}
