package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// RuntimePath is the import path of the runtime package the generated code
// calls (imported as chronos).
const RuntimePath = "github.com/chronos-go/chronos/runtime"

// wellKnown holds the types handler signatures are matched against, by
// object identity rather than by name.
type wellKnown struct {
	context types.Type      // context.Context, nil if unreachable
	task    *types.TypeName // chronos.Task, nil if unreachable
	errType types.Type
}

// findWellKnown looks up context.Context and chronos.Task in the packages
// pkg imports, directly or not. A package that does not reach the runtime
// cannot take a *chronos.Task, so a nil task is not an error by itself.
func findWellKnown(pkg *types.Package) wellKnown {
	wk := wellKnown{errType: types.Universe.Lookup("error").Type()}
	seen := make(map[*types.Package]bool)
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		switch p.Path() {
		case "context":
			if obj, ok := p.Scope().Lookup("Context").(*types.TypeName); ok {
				wk.context = obj.Type()
			}
		case RuntimePath:
			if obj, ok := p.Scope().Lookup("Task").(*types.TypeName); ok {
				wk.task = obj
			}
		}
		for _, q := range p.Imports() {
			walk(q)
		}
	}
	walk(pkg)
	return wk
}

// handlerInfo is a handler found in the source, before it joins the model.
type handlerInfo struct {
	Handler
	recv    *types.TypeName // receiver or holding struct type; nil for funcs
	recvPtr bool
	pos     token.Pos
	args    types.Type // the handler's own A, nil when generated
	specs   []*spec
}

const acceptedShapes = "func(context.Context) error, func(context.Context, *chronos.Task[A]) error, or either with an (R, error) result"

// resolveFunc reads the handler declared by fd.
func (c *checker) resolveFunc(fd *ast.FuncDecl) *handlerInfo {
	obj, ok := c.info.Defs[fd.Name].(*types.Func)
	if !ok {
		c.r.errorf(fd.Name.Pos(), "type-error", "cannot type-check %s", fd.Name.Name)
		return nil
	}
	sig := obj.Signature()
	h := &handlerInfo{pos: fd.Name.Pos()}
	h.Name = fd.Name.Name
	h.Receiver = -1
	display := fd.Name.Name
	if sig.TypeParams().Len() > 0 {
		c.r.errorf(fd.Type.TypeParams.Pos(), "bad-signature", "generic function %s cannot be a handler: the generated code has no type arguments to give it", display)
		return nil
	}
	if recv := sig.Recv(); recv != nil {
		t := types.Unalias(recv.Type())
		if p, ok := t.(*types.Pointer); ok {
			h.recvPtr = true
			t = types.Unalias(p.Elem())
		}
		named, ok := t.(*types.Named)
		if !ok {
			c.r.errorf(fd.Recv.Pos(), "type-error", "cannot type-check the receiver of %s", display)
			return nil
		}
		display = named.Obj().Name() + "." + fd.Name.Name
		if named.TypeParams().Len() > 0 {
			c.r.errorf(fd.Recv.List[0].Type.Pos(), "bad-receiver", "method %s has a generic receiver; generic types cannot hold handlers (the generated code could not name an instantiation)", display)
			return nil
		}
		h.recv = named.Obj()
	}
	if !c.checkSignature(h, sig, fd.Type, display) {
		return nil
	}
	if h.recv == nil && slices.Contains(bodyNames, h.Name) {
		c.r.errorf(fd.Name.Pos(), "name-collision", "handler function %s has the name of a parameter or variable of the generated %s; rename it", h.Name, EntryPoint)
		return nil
	}
	c.name(h, display)
	return h
}

// bodyNames are the parameters and locals of the generated entry point.
var bodyNames = []string{"sched", "mux", "err", "g", "ctx"}

// resolveField reads the handler held by a func-typed field of a
// //chronos:schedules struct.
func (c *checker) resolveField(ts *ast.TypeSpec, field *ast.Field) *handlerInfo {
	if len(field.Names) != 1 {
		what := "an embedded field"
		if len(field.Names) > 1 {
			what = "a field list"
		}
		c.r.errorf(field.Pos(), "misplaced", "a chronos tag must be on one named field, not %s", what)
		return nil
	}
	obj, ok := c.info.Defs[ts.Name].(*types.TypeName)
	if !ok {
		c.r.errorf(ts.Name.Pos(), "type-error", "cannot type-check %s", ts.Name.Name)
		return nil
	}
	if named, ok := obj.Type().(*types.Named); ok && named.TypeParams().Len() > 0 {
		c.r.errorf(ts.Name.Pos(), "bad-receiver", "generic struct %s cannot hold handlers (the generated code could not name an instantiation)", ts.Name.Name)
		return nil
	}
	name := field.Names[0].Name
	display := ts.Name.Name + "." + name
	h := &handlerInfo{pos: field.Names[0].Pos(), recv: obj, recvPtr: true}
	h.Name = name
	h.Receiver = -1
	h.Field = true
	t := c.info.TypeOf(field.Type)
	if t == nil || !isValid(t) {
		c.typeErrorsIn(field.Type, display)
		return nil
	}
	sig, ok := t.Underlying().(*types.Signature)
	if !ok {
		c.r.errorf(field.Type.Pos(), "bad-signature", "field %s has type %s; a handler field must have a func type: %s", display, c.typeString(t), acceptedShapes)
		return nil
	}
	if !c.checkSignature(h, sig, field.Type, display) {
		return nil
	}
	c.name(h, display)
	return h
}

// checkSignature matches sig against the accepted handler shapes and fills
// in h.TakesTask, h.args and h.Result.
func (c *checker) checkSignature(h *handlerInfo, sig *types.Signature, node ast.Node, display string) bool {
	if !isValid(sig) {
		c.typeErrorsIn(node, display)
		return false
	}
	bad := func(at token.Pos, why string) bool {
		c.r.errorf(at, "bad-signature", "handler %s has type %s%s; want %s", display, c.typeString(stripRecv(sig)), why, acceptedShapes)
		return false
	}
	// Point at the parameter or result list that is wrong.
	paramsPos, resultsPos := node.Pos(), node.Pos()
	if ft, ok := node.(*ast.FuncType); ok {
		paramsPos = ft.Params.Pos()
		resultsPos = ft.Params.End()
		if ft.Results != nil {
			resultsPos = ft.Results.Pos()
		}
	}
	params, results := sig.Params(), sig.Results()
	if sig.Variadic() {
		return bad(paramsPos, " (variadic)")
	}
	if params.Len() < 1 || params.Len() > 2 || c.wk.context == nil || !types.Identical(params.At(0).Type(), c.wk.context) {
		return bad(paramsPos, "")
	}
	if results.Len() < 1 || results.Len() > 2 || !types.Identical(results.At(results.Len()-1).Type(), c.wk.errType) {
		return bad(resultsPos, "")
	}
	if params.Len() == 2 {
		a, ok := c.taskArg(params.At(1).Type())
		if !ok {
			return bad(paramsPos, "")
		}
		h.TakesTask, h.args = true, a
		expr, err := c.typeExpr(a)
		if err == nil && !isStructish(a) {
			err = fmt.Errorf("%s is not a struct or a pointer to a struct", c.typeString(a))
		}
		if err != nil {
			c.r.errorf(paramsPos, "bad-args", "handler %s: task args type: %v; the scheduler needs to build its zero value", display, err)
			return false
		}
		h.Args = expr
	}
	if results.Len() == 2 {
		r := results.At(0).Type()
		expr, err := c.typeExpr(r)
		if err != nil && !h.TakesTask {
			// Only an adapter around a context-only handler names R.
			c.r.errorf(resultsPos, "bad-signature", "handler %s: result type %v", display, err)
			return false
		}
		h.Result = &expr
	}
	return true
}

// taskArg returns A when t is *chronos.Task[A].
func (c *checker) taskArg(t types.Type) (types.Type, bool) {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok || c.wk.task == nil {
		return nil, false
	}
	named, ok := types.Unalias(p.Elem()).(*types.Named)
	if !ok || named.Origin().Obj() != c.wk.task || named.TypeArgs().Len() != 1 {
		return nil, false
	}
	return named.TypeArgs().At(0), true
}

// name sets the handler's kind and, for context-only handlers, the name of
// the generated Args type.
func (c *checker) name(h *handlerInfo, display string) {
	h.Kind = c.pkg.Name() + "." + display
	if h.TakesTask {
		return
	}
	var b strings.Builder
	if h.recv != nil {
		b.WriteString(upperFirst(h.recv.Name()))
	}
	b.WriteString(upperFirst(h.Name))
	b.WriteString("Args")
	h.Args = TypeExpr{Name: b.String()}
	h.ArgsGen = true
}

// typeErrorsIn reports the type errors inside node: a handler signature
// that does not type-check cannot be generated for.
func (c *checker) typeErrorsIn(node ast.Node, display string) {
	n := 0
	for _, e := range c.typeErrors {
		if e.Fset == c.r.fset && e.Pos >= node.Pos() && e.Pos < node.End() {
			c.r.errorf(e.Pos, "type-error", "%s (in the signature of handler %s)", e.Msg, display)
			n++
		}
	}
	if n == 0 {
		c.r.errorf(node.Pos(), "type-error", "the signature of handler %s does not type-check", display)
	}
}

// typeString renders t relative to the package being generated, with the
// runtime package shown as chronos.
func (c *checker) typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == c.pkg {
			return ""
		}
		if p.Path() == RuntimePath {
			return "chronos"
		}
		return p.Name()
	})
}

// typeExpr converts t into a TypeExpr the emitter can print.
func (c *checker) typeExpr(t types.Type) (TypeExpr, error) {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		return TypeExpr{Name: t.Name()}, nil
	case *types.Pointer:
		e, err := c.typeExpr(t.Elem())
		if err != nil {
			return e, err
		}
		if e.Pointer || e.Elem != nil {
			return TypeExpr{Pointer: true, Elem: &e}, nil
		}
		e.Pointer = true
		return e, nil
	case *types.Slice:
		e, err := c.typeExpr(t.Elem())
		return TypeExpr{Slice: true, Elem: &e}, err
	case *types.Array:
		e, err := c.typeExpr(t.Elem())
		return TypeExpr{Len: t.Len(), Elem: &e}, err
	case *types.Map:
		k, err := c.typeExpr(t.Key())
		if err != nil {
			return k, err
		}
		e, err := c.typeExpr(t.Elem())
		return TypeExpr{Map: true, Key: &k, Elem: &e}, err
	case *types.Interface:
		if t.Empty() {
			return TypeExpr{Name: "any"}, nil
		}
	case *types.Named:
		obj := t.Obj()
		e := TypeExpr{Name: obj.Name()}
		if obj.Pkg() != nil && obj.Pkg() != c.pkg {
			if !obj.Exported() {
				return e, fmt.Errorf("%s is unexported in another package", c.typeString(t))
			}
			e.Path, e.PkgName = obj.Pkg().Path(), obj.Pkg().Name()
		}
		if obj.Parent() != nil && obj.Pkg() != nil && obj.Parent() != obj.Pkg().Scope() {
			return e, fmt.Errorf("%s is declared inside a function", c.typeString(t))
		}
		for i := range t.TypeArgs().Len() {
			a, err := c.typeExpr(t.TypeArgs().At(i))
			if err != nil {
				return e, err
			}
			e.Args = append(e.Args, a)
		}
		return e, nil
	}
	return TypeExpr{}, fmt.Errorf("%s cannot be named in generated code", c.typeString(t))
}

func isStructish(t types.Type) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	_, named := types.Unalias(t).(*types.Named)
	_, isStruct := t.Underlying().(*types.Struct)
	return named && isStruct
}

func stripRecv(sig *types.Signature) *types.Signature {
	return types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic())
}

// isValid reports whether t contains no invalid (unresolved) types.
func isValid(t types.Type) bool {
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() != types.Invalid
	case *types.Pointer:
		return isValid(t.Elem())
	case *types.Slice:
		return isValid(t.Elem())
	case *types.Array:
		return isValid(t.Elem())
	case *types.Map:
		return isValid(t.Key()) && isValid(t.Elem())
	case *types.Chan:
		return isValid(t.Elem())
	case *types.Signature:
		return isValid(t.Params()) && isValid(t.Results())
	case *types.Tuple:
		for i := range t.Len() {
			if !isValid(t.At(i).Type()) {
				return false
			}
		}
		return true
	case *types.Named:
		for i := range t.TypeArgs().Len() {
			if !isValid(t.TypeArgs().At(i)) {
				return false
			}
		}
		return true
	case *types.Alias:
		return isValid(types.Unalias(t))
	}
	return true
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
