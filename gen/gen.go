// Package gen is chronosgen: it turns //chronos: directives and chronos
// struct tags into typed registration code for the chronos runtime.
//
// Generation is a pipeline of plain functions over plain data:
//
//	load      go/packages, with -tags=chronosgen so earlier output is ignored
//	scan      find //chronos: comments and chronos:"…" tags (scan.go)
//	check     read keys against the key table, validate them with the
//	          runtime's own time engine, resolve handler types (Check)
//	model     sorted, position-free data (model.go)
//	emit      jennifer, gofmt'd, deterministic (Emit)
//	write     atomic, skipped when unchanged, or compared under -check
//
// Generate does everything but the write and returns the files; File.Write
// applies one and File.Diff compares it with the disk (chronosgen -check).
// Check and Emit are the validating and emitting steps on their own, for
// tools that load packages themselves. docs/directives.md describes the
// directives.
package gen

import (
	"bytes"
	"context"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

// DefaultOutput is the name of the generated file in each package.
const DefaultOutput = "chronos_gen.go"

// Config says what to generate. The zero value generates for the package
// in the current directory.
type Config struct {
	Dir      string   // directory to load from; "" means the current directory
	Patterns []string // package patterns; none means "."
	Tags     []string // extra build tags
	Output   string   // generated file name in each package; "" means DefaultOutput
	Env      []string // environment for the go command; nil means os.Environ()
}

// File is one generated file, or one to delete.
type File struct {
	PkgPath string
	Path    string // absolute
	Content []byte // nil: the package has no directives left; delete the file
}

// Result is the outcome of Generate.
type Result struct {
	Files       []File      // sorted by Path; empty when Diagnostics has errors
	Diagnostics Diagnostics // errors and warnings, sorted
	TypeErrors  []string    // tolerated type errors outside handler signatures
	LoadTime    time.Duration
	GenTime     time.Duration // everything after loading
}

// Generate loads the packages of cfg and computes their generated files.
// It writes nothing. When the diagnostics hold an error, Files is empty:
// a run with errors never produces (or deletes) output. The error result is
// for failures to run at all, such as a go command that cannot list the
// patterns.
func Generate(ctx context.Context, cfg Config) (*Result, error) {
	pkgs, res, err := generatePackages(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		res.Diagnostics = append(res.Diagnostics, p.diags...)
		res.TypeErrors = append(res.TypeErrors, p.typeErrors...)
		if p.file != nil {
			res.Files = append(res.Files, *p.file)
		}
	}
	res.Diagnostics = res.Diagnostics.sort()
	if res.Diagnostics.HasErrors() {
		res.Files = nil
	}
	slices.SortFunc(res.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// pkgResult is the outcome for one package.
type pkgResult struct {
	pkgPath    string
	file       *File // nil: nothing to write or delete
	diags      Diagnostics
	typeErrors []string

	model   *Package // checked and still to emit into outPath
	outPath string
}

// generatePackages runs the pipeline for every package of cfg, keeping the
// packages apart (the golden tests check each on its own). The Result holds
// only the timings.
func generatePackages(ctx context.Context, cfg Config) ([]pkgResult, *Result, error) {
	if cfg.Output == "" {
		cfg.Output = DefaultOutput
	}
	fset := token.NewFileSet()
	start := time.Now()
	pkgs, err := load(ctx, cfg, fset)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{LoadTime: time.Since(start)}
	start = time.Now()
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	out := make([]pkgResult, len(pkgs))
	for i, pkg := range pkgs {
		out[i] = checkPackage(pkg, fset, cfg.Output)
		// Emitting needs only the model. Letting go of the syntax and
		// types keeps the garbage collector's work during emit in
		// proportion to the output rather than to the loaded packages.
		pkgs[i] = nil
	}
	crossPackage(out)
	for i := range out {
		if err := out[i].emit(); err != nil {
			return nil, nil, err
		}
	}
	res.GenTime = time.Since(start)
	return out, res, nil
}

// generatePackage checks and emits one package.
func generatePackage(pkg *packages.Package, fset *token.FileSet, output string) (pkgResult, error) {
	p := checkPackage(pkg, fset, output)
	return p, p.emit()
}

// checkPackage reports the package's diagnostics and decides its output:
// a model to emit, a file to delete, or nothing.
func checkPackage(pkg *packages.Package, fset *token.FileSet, output string) pkgResult {
	p := pkgResult{pkgPath: pkg.PkgPath}
	diags, ok := loadErrors(pkg, fset)
	p.diags = diags
	if !ok {
		return p
	}
	for _, e := range pkg.TypeErrors {
		p.typeErrors = append(p.typeErrors, e.Error())
	}
	p.diags = append(p.diags, checkIgnored(pkg, fset, output)...)
	m, diags := Check(fset, pkg.Syntax, pkg.Types, pkg.TypesInfo, pkg.TypeErrors)
	p.diags = append(p.diags, diags...).sort()
	path := filepath.Join(pkgDir(pkg), output)
	switch {
	case m == nil:
		if isOurFile(path) {
			p.file = &File{PkgPath: pkg.PkgPath, Path: path}
		}
	case !p.diags.HasErrors():
		if _, err := os.Stat(path); err == nil && !isOurFile(path) {
			p.diags = append(p.diags, Diagnostic{
				Pos:  token.Position{Filename: path},
				Code: "foreign-output",
				Msg:  "exists and was not written by chronosgen; rename it or choose another name with -o",
			})
			return p
		}
		p.model, p.outPath = m, path
	}
	return p
}

// emit renders the file of a checked package that has one to write.
func (p *pkgResult) emit() error {
	if p.model == nil {
		return nil
	}
	src, err := Emit(p.model)
	if err != nil {
		return err
	}
	p.file = &File{PkgPath: p.pkgPath, Path: p.outPath, Content: src}
	p.model = nil
	return nil
}

func pkgDir(pkg *packages.Package) string {
	for _, list := range [][]string{pkg.GoFiles, pkg.IgnoredFiles, pkg.CompiledGoFiles} {
		if len(list) > 0 {
			return filepath.Dir(list[0])
		}
	}
	return pkg.Dir
}

// isOurFile reports whether path exists and was written by chronosgen, so
// it may be deleted or overwritten. A hand-written file of the same name is
// never touched.
func isOurFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return bytes.Contains(head[:n], []byte(header))
}
