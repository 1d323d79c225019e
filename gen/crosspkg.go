package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
)

// crossPackage warns about schedule IDs, group IDs and task kinds that two
// packages of one run both declare. Each package is checked on its own, and
// such a clash is legal Go, but it is a bug when both packages run against
// the same namespace (the registry keeps one definition per ID) or register
// on the same Mux (AddHandler panics on a second kind). The generator cannot
// know whether they do, hence warnings, not errors. Generated kinds derive
// from the package name, so two packages named alike (say two "jobs") with
// like-named handlers are the usual way to get here.
//
// The warning goes to the later package (by import path) and points back
// at the first. Positions carry no column: the model keeps lines only.
func crossPackage(pkgs []pkgResult) {
	type decl struct {
		pkg string
		pos token.Position
	}
	seen := map[string]decl{} // "what\x00name" → first declaration
	warned := map[string]bool{}
	for i := range pkgs {
		p := &pkgs[i]
		m := p.model
		if m == nil {
			continue
		}
		dir := filepath.Dir(p.outPath)
		at := func(s Source) token.Position {
			return token.Position{Filename: filepath.Join(dir, s.File), Line: s.Line}
		}
		check := func(what, name string, pos token.Position, advice string) {
			key := what + "\x00" + name
			first, dup := seen[key]
			if !dup {
				seen[key] = decl{p.pkgPath, pos}
				return
			}
			if first.pkg == p.pkgPath {
				return // one package's own duplicates are Check's errors
			}
			warned[p.pkgPath] = true
			p.diags = append(p.diags, Diagnostic{
				Pos:      pos,
				Severity: Warning,
				Code:     "cross-package",
				Msg:      fmt.Sprintf("%s %q is also declared in package %s; %s", what, name, first.pkg, advice),
				Related:  []Related{{Pos: first.pos, Msg: "declared here"}},
			})
		}
		const idAdvice = "if both run against one namespace, give one of them another id="
		for _, s := range m.Schedules {
			check("schedule ID", s.ID, at(s.Source), idAdvice)
		}
		for _, g := range m.Groups {
			check("schedule ID", g.ID, at(g.Source), idAdvice)
		}
		const kindAdvice = "if both register on one Mux, the second AddHandler panics; rename the package, type or method, or use an args type of your own"
		for _, s := range m.Schedules {
			check("task kind", m.Handlers[s.Handler].Kind, at(s.Source), kindAdvice)
		}
		for _, g := range m.Groups {
			for _, j := range g.Jobs {
				check("task kind", m.Handlers[j.Handler].Kind, at(j.Source), kindAdvice)
			}
		}
	}
	for i := range pkgs {
		if warned[pkgs[i].pkgPath] { // the others are sorted already
			pkgs[i].diags = pkgs[i].diags.sort()
		}
	}
}
