package gen

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// BuildTag is set while loading, so that generated files, which carry
// //go:build !chronosgen, never take part in their own generation: a stale
// or broken output cannot break the next run.
const BuildTag = "chronosgen"

const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedTypesInfo

// load type-checks the packages matched by cfg.Patterns, without their
// dependencies' syntax (export data is enough and much faster).
func load(ctx context.Context, cfg Config, fset *token.FileSet) ([]*packages.Package, error) {
	tags := append([]string{BuildTag}, cfg.Tags...)
	patterns := cfg.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	escaped := make([]string, len(patterns))
	for i, p := range patterns {
		// A pattern with '=' would be a go/packages query (file=…).
		escaped[i] = "pattern=" + p
	}
	pkgs, err := packages.Load(&packages.Config{
		Context:    ctx,
		Mode:       loadMode,
		Dir:        cfg.Dir,
		Env:        cfg.Env,
		BuildFlags: []string{"-tags=" + strings.Join(tags, ",")},
		Fset:       fset,
		Tests:      false,
	}, escaped...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(patterns, " "), err)
	}
	return pkgs, nil
}

// loadErrors turns the errors that make a package unusable into
// diagnostics. Type errors are not among them: they only matter inside a
// handler signature, which Check decides. ok is false when the package
// cannot be checked at all.
func loadErrors(pkg *packages.Package, fset *token.FileSet) (diags Diagnostics, ok bool) {
	fatal := len(pkg.Syntax) == 0 || pkg.Types == nil
	for _, e := range pkg.Errors {
		switch {
		case e.Kind == packages.ParseError:
			fatal = true
		case e.Kind == packages.TypeError:
			continue
		case e.Kind == packages.ListError && len(pkg.TypeErrors) > 0:
			// go list -export repeats the type errors as a list error.
			continue
		default:
			fatal = true
		}
		diags = append(diags, Diagnostic{Pos: parsePos(e.Pos, pkg.PkgPath), Code: "load", Msg: e.Msg})
	}
	if len(pkg.GoFiles) == 0 && len(pkg.Errors) == 0 {
		return nil, false // nothing to generate for, nothing wrong
	}
	return diags, !fatal
}

// parsePos reads the "file:line:col" of a packages.Error; errors without a
// position are attributed to the package path.
func parsePos(s, pkgPath string) token.Position {
	if s == "" || s == "-" {
		return token.Position{Filename: pkgPath}
	}
	var p token.Position
	parts := strings.Split(s, ":")
	nums := 0
	for i := len(parts) - 1; i > 0 && nums < 2; i-- {
		if _, err := strconv.Atoi(parts[i]); err != nil {
			break
		}
		nums++
	}
	p.Filename = strings.Join(parts[:len(parts)-nums], ":")
	if nums >= 1 {
		p.Line, _ = strconv.Atoi(parts[len(parts)-nums])
	}
	if nums == 2 {
		p.Column, _ = strconv.Atoi(parts[len(parts)-1])
	}
	return p
}

// checkIgnored reports directives in files the build excluded (another
// GOOS, GOARCH or build tag): code generated for this build could not
// refer to their handlers, and code generated for theirs would not build
// here.
func checkIgnored(pkg *packages.Package, fset *token.FileSet, output string) Diagnostics {
	r := &reporter{fset: fset}
	for _, name := range pkg.IgnoredFiles {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil || !strings.Contains(string(src), "//chronos:") {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil || isGeneratedByUs(f) {
			continue
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if d, ok := ast.ParseDirective(c.Slash, c.Text); ok && d.Tool == "chronos" {
					r.errorf(c.Slash, "excluded-file", "//chronos:%s in a file excluded from this build by its build constraints; move the handler to a file every build includes", d.Name)
				}
			}
		}
	}
	return r.diags
}
