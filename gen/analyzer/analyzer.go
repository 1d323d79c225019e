// Package analyzer reports mistakes in //chronos: directives and chronos
// struct tags as a go/analysis pass, so editors and vet-style drivers show
// them while typing instead of at go generate time.
//
// It runs gen.Check, the validator chronosgen itself uses, so both report
// the same diagnostics. It only checks; it never generates. Directives in
// files excluded by build constraints are chronosgen's to report.
package analyzer

import (
	"go/token"

	"golang.org/x/tools/go/analysis"

	"github.com/chronos-go/chronos/gen"
)

// Analyzer checks //chronos: directives and chronos struct tags.
var Analyzer = &analysis.Analyzer{
	Name: "chronos",
	Doc:  "check //chronos: directives and chronos struct tags (the checks of chronosgen)",
	URL:  "https://pkg.go.dev/github.com/chronos-go/chronos/gen/analyzer",
	Run:  run,
}

func run(pass *analysis.Pass) (any, error) {
	_, diags := gen.Check(pass.Fset, pass.Files, pass.Pkg, pass.TypesInfo, pass.TypeErrors)
	for _, d := range diags {
		pos := posOf(pass, d.Pos)
		if !pos.IsValid() {
			continue
		}
		msg := d.Msg
		if d.Severity == gen.Warning {
			msg = "warning: " + msg
		}
		ad := analysis.Diagnostic{Pos: pos, Category: d.Code, Message: msg}
		for _, r := range d.Related {
			if rp := posOf(pass, r.Pos); rp.IsValid() {
				ad.Related = append(ad.Related, analysis.RelatedInformation{Pos: rp, Message: r.Msg})
			}
		}
		pass.Report(ad)
	}
	return nil, nil
}

// posOf turns a resolved position back into a token.Pos of pass.
func posOf(pass *analysis.Pass, p token.Position) token.Pos {
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		if tf != nil && tf.Name() == p.Filename && p.Offset <= tf.Size() {
			return tf.Pos(p.Offset)
		}
	}
	return token.NoPos
}
