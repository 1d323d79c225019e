package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dave/jennifer/jen"
)

// piece is one independently rendered and formatted part of the file.
type piece struct {
	kind int               // pieceDecl, pieceSig or pieceStmts
	code func() []jen.Code // builds the piece's code

	out     []byte       // formatted, without the wrapper
	imports []importSpec // the imports jennifer gave the piece
	err     error
}

const (
	pieceDecl  = iota // top-level declarations
	pieceSig          // the entry point's doc comment and signature, up to "{"
	pieceStmts        // statements of the entry point's body
)

// Wrappers that make each piece a whole file, so format.Source parses it
// once (a partial source would be tried as a file, then as declarations,
// then as statements).
const (
	declPrefix = "package p\n\n"
	stmtPrefix = "package p\n\nfunc _() {\n"
)

// cutMark separates a piece's code from the package clause and imports
// that jennifer renders before it. Nothing else in the output can be this
// line: string literals are quoted, and the comments are ours.
const cutMark = "// chronosgen:cut"

// renderPieces builds, renders and formats the pieces on every core.
// Workers take the next piece in order, so a slow piece delays no other.
func renderPieces(e *emitter, pieces []*piece) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pieces)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(pieces)); i = next.Add(1) - 1 {
				e.renderPiece(pieces[i])
			}
		})
	}
	wg.Wait()
	for _, p := range pieces {
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// renderPiece renders p in a jennifer file of its own, named like the
// whole file's, and formats it.
func (e *emitter) renderPiece(p *piece) {
	f := e.file()
	f.NoFormat = true
	f.Comment(cutMark[len("// "):])
	for _, c := range p.code() {
		f.Add(c)
	}
	var raw bytes.Buffer
	if err := f.Render(&raw); err != nil {
		p.err = err
		return
	}
	prefix, body, ok := bytes.Cut(raw.Bytes(), []byte("\n"+cutMark+"\n"))
	if !ok {
		p.err = fmt.Errorf("piece marker missing in:\n%s", raw.Bytes())
		return
	}
	if p.imports, p.err = parseImports(prefix); p.err != nil {
		return
	}

	wrap, end := declPrefix, "\n"
	if p.kind == pieceStmts {
		wrap, end = stmtPrefix, "\n}\n"
	}
	src := make([]byte, 0, len(wrap)+len(body)+len(end))
	src = append(append(append(src, wrap...), body...), end...)
	out, err := format.Source(src)
	if err != nil {
		p.err = fmt.Errorf("%w in:\n%s", err, src)
		return
	}
	// Cut the wrapper off again.
	if !bytes.HasPrefix(out, []byte(wrap)) {
		p.err = fmt.Errorf("formatted piece does not start with its wrapper:\n%s", out)
		return
	}
	out = out[len(wrap):]
	switch p.kind {
	case pieceSig:
		// Up to the body's brace: gofmt writes an empty body as "{}" or,
		// after a long signature, as "{\n}".
		out = append(out[:bytes.LastIndexByte(out, '{')+1], '\n')
	case pieceStmts:
		out = bytes.TrimSuffix(out, []byte("}\n"))
	}
	p.out = out
}

// parseImports reads the import declarations jennifer rendered before a
// piece: the packages the piece refers to, under the names it used.
func parseImports(prefix []byte) ([]importSpec, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", prefix, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("imports of a piece: %w in:\n%s", err, prefix)
	}
	var out []importSpec
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		im := importSpec{path: p}
		if spec.Name != nil {
			im.name, im.alias = spec.Name.Name, true
		}
		out = append(out, im)
	}
	return out, nil
}

// usedImports is every import of any piece, sorted by path as gofmt sorts
// an import block.
func usedImports(pieces []*piece) []importSpec {
	var out []importSpec
	for _, p := range pieces {
		for _, im := range p.imports {
			if !slices.ContainsFunc(out, func(o importSpec) bool { return o.path == im.path }) {
				out = append(out, im)
			}
		}
	}
	slices.SortFunc(out, func(a, b importSpec) int { return strings.Compare(a.path, b.path) })
	return out
}

// joinPieces writes the file: the head, then the pieces, each declaration
// after a blank line, and the entry point's closing brace.
func joinPieces(head []byte, pieces []*piece) []byte {
	n := len(head) + 2
	for _, p := range pieces {
		n += len(p.out) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, head...)
	for _, p := range pieces {
		if p.kind != pieceStmts {
			out = append(out, '\n')
		}
		out = append(out, p.out...)
	}
	return append(out, "}\n"...)
}
