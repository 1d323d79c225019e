package gen

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/chronos-go/chronos/gen/directive"
)

// rawDirective is one //chronos: line, or one chronos struct tag, split into
// arguments but not yet interpreted.
type rawDirective struct {
	name  string    // "schedule", "group" or "schedules"; "schedule" for tags
	pos   token.Pos // the "//" of the comment, or the tag literal
	args  []directive.Arg
	posOf func(off int) token.Pos // maps a byte offset of the args text to a position
	src   Source
	bad   bool // the arguments had syntax errors (already reported)

	// Exactly one owner is set.
	fn    *ast.FuncDecl // //chronos:schedule on a func or method
	typ   *ast.TypeSpec // //chronos:group or //chronos:schedules on a type
	pkg   *ast.File     // //chronos:group on a package clause
	field *ast.Field    // a chronos tag on a field of a //chronos:schedules struct
	strct *ast.TypeSpec // the struct holding field
}

// argPos is the position of the key of a.
func (d *rawDirective) keyPos(a directive.Arg) token.Pos { return d.posOf(a.KeyOff) }

// valPos is the position of the i'th byte of a's value.
func (d *rawDirective) valPos(a directive.Arg, i int) token.Pos { return d.posOf(a.Offset(i)) }

var spacedDirective = regexp.MustCompile(`^//\s+chronos:[a-z]`)

// scanFile finds every //chronos: comment in f, attaches each to the
// declaration whose doc comment holds it, and reports the ones that belong
// nowhere. Struct tags of //chronos:schedules structs are read later, once
// the struct is known.
func scanFile(fset *token.FileSet, f *ast.File, r *reporter) []*rawDirective {
	type owner struct {
		fn  *ast.FuncDecl
		typ *ast.TypeSpec
		pkg *ast.File
	}
	owners := make(map[*ast.CommentGroup]owner)
	if f.Doc != nil {
		owners[f.Doc] = owner{pkg: f}
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Doc != nil {
				owners[decl.Doc] = owner{fn: decl}
			}
		case *ast.GenDecl:
			if decl.Tok != token.TYPE {
				continue
			}
			for _, spec := range decl.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.Doc != nil {
					owners[ts.Doc] = owner{typ: ts}
				}
				if decl.Doc != nil && len(decl.Specs) == 1 {
					owners[decl.Doc] = owner{typ: ts}
				}
			}
		}
	}

	var out []*rawDirective
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if spacedDirective.MatchString(c.Text) {
				r.warnf(c.Slash, "spaced-directive", "%q is not a directive because of the space after //; write //chronos:", firstWord(c.Text))
				continue
			}
			d, ok := ast.ParseDirective(0, c.Text)
			if !ok || d.Tool != "chronos" {
				continue
			}
			slash, argsOff := c.Slash, int(d.ArgsPos)
			raw := &rawDirective{
				name:  d.Name,
				pos:   c.Slash,
				posOf: func(off int) token.Pos { return slash + token.Pos(argsOff+off) },
				src:   Source{File: filepath.Base(fset.Position(c.Slash).Filename), Line: fset.Position(c.Slash).Line},
			}
			args, errs := directive.Parse(d.Args)
			for _, e := range errs {
				r.errorf(raw.posOf(e.Off), "syntax", "%s", e.Msg)
			}
			raw.args, raw.bad = args, len(errs) > 0
			o := owners[cg]
			raw.fn, raw.typ, raw.pkg = o.fn, o.typ, o.pkg
			if !placeDirective(raw, r) {
				continue
			}
			out = append(out, raw)
		}
	}
	return out
}

// placeDirective checks that raw sits on a declaration it applies to.
func placeDirective(raw *rawDirective, r *reporter) bool {
	switch raw.name {
	case "schedule":
		if raw.fn == nil {
			r.errorf(raw.pos, "misplaced", "//chronos:schedule must be in the doc comment of a function or method (for struct fields use a chronos:\"…\" tag on a //chronos:schedules struct)")
			return false
		}
	case "group":
		if raw.typ == nil && raw.pkg == nil {
			r.errorf(raw.pos, "misplaced", "//chronos:group must be in the doc comment of the package clause or of a type")
			return false
		}
	case "schedules":
		if raw.typ == nil {
			r.errorf(raw.pos, "misplaced", "//chronos:schedules must be in the doc comment of a struct type")
			return false
		}
		if _, ok := raw.typ.Type.(*ast.StructType); !ok {
			r.errorf(raw.pos, "misplaced", "//chronos:schedules must be on a struct type; %s is not a struct", raw.typ.Name.Name)
			return false
		}
		if len(raw.args) > 0 {
			r.errorf(raw.keyPos(raw.args[0]), "bad-key", "//chronos:schedules takes no arguments; put keys in the fields' chronos tags")
		}
	default:
		names := make([]string, len(directiveNames))
		for i, d := range directiveNames {
			names[i] = d.name
		}
		msg := "unknown directive //chronos:" + raw.name
		if s := suggest(raw.name, names); s != "" {
			msg += "; did you mean //chronos:" + s + "?"
		}
		r.errorf(raw.pos, "unknown-directive", "%s", msg)
		return false
	}
	return true
}

// scanTags reads the chronos tags of the fields of a //chronos:schedules
// struct. Fields without a chronos tag are ignored.
func scanTags(fset *token.FileSet, ts *ast.TypeSpec, r *reporter) []*rawDirective {
	var out []*rawDirective
	st := ts.Type.(*ast.StructType)
	for _, field := range st.Fields.List {
		if field.Tag == nil {
			continue
		}
		lit := field.Tag
		content, err := strconv.Unquote(lit.Value)
		if err != nil {
			continue // the type checker reports it
		}
		val, valOff, found, ok := lookupTag(content, "chronos")
		if !found {
			continue
		}
		raw := &rawDirective{
			name:  "schedule",
			pos:   lit.Pos(),
			field: field,
			strct: ts,
			src:   Source{File: filepath.Base(fset.Position(lit.Pos()).Filename), Line: fset.Position(lit.Pos()).Line},
		}
		litPos := lit.Pos()
		switch {
		case !ok:
			r.errorf(litPos, "syntax", "malformed chronos struct tag; write chronos:\"key=value …\"")
			continue
		case lit.Value[0] == '`' && valOff >= 0:
			// Raw literal and an escape-free tag value: offsets map 1:1.
			base := litPos + 1 + token.Pos(valOff)
			raw.posOf = func(off int) token.Pos { return base + token.Pos(off) }
		default:
			// Escapes change lengths: point at the tag itself.
			raw.posOf = func(int) token.Pos { return litPos }
		}
		args, errs := directive.Parse(val)
		for _, e := range errs {
			msg := e.Msg
			if e.Unquoted != nil {
				// Show the fix as it is written in a tag: '…' needs no escapes there.
				msg = directive.UnquotedMsg(*e.Unquoted, '\'')
			}
			r.errorf(raw.posOf(e.Off), "syntax", "%s", msg)
		}
		raw.args, raw.bad = args, len(errs) > 0
		out = append(out, raw)
	}
	return out
}

// lookupTag finds key in a struct tag written in the conventional
// key:"value" form. valOff is the offset of the value's first byte in tag,
// or -1 when the value contains escapes. ok is false when the tag is
// malformed at key.
func lookupTag(tag, key string) (val string, valOff int, found, ok bool) {
	i := 0
	for i < len(tag) {
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		j := i
		for j < len(tag) && tag[j] > ' ' && tag[j] != ':' && tag[j] != '"' && tag[j] != 0x7f {
			j++
		}
		if j == i || j+1 >= len(tag) || tag[j] != ':' || tag[j+1] != '"' {
			return "", 0, false, true
		}
		name := tag[i:j]
		q, err := strconv.QuotedPrefix(tag[j+1:])
		if err != nil {
			return "", 0, name == key, false
		}
		if name == key {
			v, err := strconv.Unquote(q)
			if err != nil {
				return "", 0, true, false
			}
			off := j + 2
			if strings.ContainsRune(q, '\\') {
				off = -1
			}
			return v, off, true, true
		}
		i = j + 1 + len(q)
	}
	return "", 0, false, true
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		if j := strings.IndexAny(s[i+1:], " \t"); j >= 0 {
			return strings.TrimSpace(s[:i+1+j])
		}
	}
	return s
}
