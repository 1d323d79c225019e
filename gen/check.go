package gen

import (
	"cmp"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// EntryPoint is the name of the generated registration function.
const EntryPoint = "RegisterChronosJobs"

// checker holds what validating one package needs.
type checker struct {
	pkg        *types.Package
	info       *types.Info
	typeErrors []types.Error
	wk         wellKnown
	r          *reporter
}

// Check validates the //chronos: directives and chronos tags of one
// type-checked package and returns the model to emit, or nil when the
// package declares no schedules. It reads only what it is given (the same
// inputs as an analysis pass) and reports every problem it finds; the
// model is only meaningful when the diagnostics hold no errors.
//
// typeErrors are the package's type errors; only those inside the
// signature of a handler stop generation.
func Check(fset *token.FileSet, files []*ast.File, pkg *types.Package, info *types.Info, typeErrors []types.Error) (*Package, Diagnostics) {
	c := &checker{pkg: pkg, info: info, typeErrors: typeErrors, wk: findWellKnown(pkg), r: &reporter{fset: fset}}
	m := c.check(fset, files)
	return m, c.r.diags.sort()
}

func (c *checker) check(fset *token.FileSet, files []*ast.File) *Package {
	handlers, groups := c.collect(fset, files)
	if len(handlers) == 0 && len(groups) == 0 {
		return nil
	}
	m := &Package{Path: c.pkg.Path(), Name: c.pkg.Name()}
	ids := &idSet{r: c.r}
	groupSpecs := c.modelGroups(m, groups, ids) // first, so jobs can find them
	recvOf := c.modelHandlers(m, handlers, ids)
	for i, g := range m.Groups {
		if len(g.Jobs) == 0 {
			c.r.warnf(groupSpecs[i].d.pos, "empty-group", "group %q has no jobs; add group=%s to a //chronos:schedule", g.ID, g.ID)
		}
	}
	c.checkKinds(handlers)
	c.checkNames(m, handlers)
	m.Receivers = c.receivers(m, handlers, recvOf)
	m.Shadowed = c.shadowed(m)
	c.sortModel(m)
	return m
}

// collect reads the directives of files: the handlers with their schedule
// specs (from doc comments and struct tags) and the group specs. A
// schedule whose handler cannot be resolved has its keys checked alone.
func (c *checker) collect(fset *token.FileSet, files []*ast.File) ([]*handlerInfo, []*spec) {
	var (
		handlers []*handlerInfo
		byDecl   = make(map[ast.Node]*handlerInfo)
		groups   []*spec
		tagged   []*rawDirective
	)
	addSchedule := func(owner ast.Node, raw *rawDirective, resolve func() *handlerInfo) {
		s := readSpec(raw, c.r)
		h, seen := byDecl[owner]
		if !seen {
			h = resolve()
			byDecl[owner] = h
			if h != nil {
				handlers = append(handlers, h)
			}
		}
		if h != nil {
			h.specs = append(h.specs, s)
		} else {
			c.checkSpecAlone(s)
		}
	}
	for _, f := range files {
		if isGeneratedByUs(f) {
			continue
		}
		for _, raw := range scanFile(fset, f, c.r) {
			switch raw.name {
			case "schedule":
				addSchedule(raw.fn, raw, func() *handlerInfo { return c.resolveFunc(raw.fn) })
			case "group":
				groups = append(groups, readSpec(raw, c.r))
			case "schedules":
				tagged = append(tagged, scanTags(fset, raw.typ, c.r)...)
			}
		}
	}
	for _, raw := range tagged {
		addSchedule(raw.field, raw, func() *handlerInfo { return c.resolveField(raw.strct, raw.field) })
	}
	return handlers, groups
}

// modelGroups adds the groups to m and returns the spec of each m.Groups
// entry.
func (c *checker) modelGroups(m *Package, groups []*spec, ids *idSet) []*spec {
	var groupSpecs []*spec
	for _, s := range groups {
		trig, kind, _ := readTrigger(s, c.r)
		checkPlace(s, onGroup, kind, c.r)
		st, ok := s.get("id")
		if !ok {
			c.r.errorf(s.d.pos, "missing-id", "a group needs id=… (the jobs join it with group=…)")
			continue
		}
		ids.add(st.str, s.d.keyPos(st.arg))
		m.Groups = append(m.Groups, Group{ID: st.str, Trigger: trig, Options: s.options(), Source: s.d.src})
		groupSpecs = append(groupSpecs, s)
	}
	return groupSpecs
}

// modelHandlers adds the handlers to m with their schedules, or their jobs
// of groups, and returns the receiver type of each m.Handlers entry.
func (c *checker) modelHandlers(m *Package, handlers []*handlerInfo, ids *idSet) []*types.TypeName {
	var recvOf []*types.TypeName
	for _, h := range c.sortHandlers(handlers) {
		hi := len(m.Handlers)
		for _, s := range h.specs {
			id := h.Kind
			if st, ok := s.get("id"); ok {
				id = st.str
				ids.add(id, s.pos("id"))
			} else if len(h.specs) > 1 {
				c.r.errorf(s.d.pos, "missing-id", "handler %s has %d schedules; give each an explicit id=… so persisted state survives reordering", strings.TrimPrefix(h.Kind, c.pkg.Name()+"."), len(h.specs))
			} else {
				ids.add(id, s.pos("id"))
			}
			if g, ok := s.get("group"); ok {
				checkPlace(s, onJob, anyTrigger, c.r)
				gi := slices.IndexFunc(m.Groups, func(x Group) bool { return x.ID == g.str })
				if gi < 0 {
					c.unknownGroup(s, g, m.Groups)
					continue
				}
				m.Groups[gi].Jobs = append(m.Groups[gi].Jobs, Job{ID: id, Handler: hi, Options: s.options(), Source: s.d.src})
				continue
			}
			trig, kind, _ := readTrigger(s, c.r)
			checkPlace(s, onSchedule, kind, c.r)
			m.Schedules = append(m.Schedules, Schedule{ID: id, Handler: hi, Trigger: trig, Options: s.options(), Source: s.d.src})
		}
		m.Handlers = append(m.Handlers, h.Handler)
		recvOf = append(recvOf, h.recv)
	}
	return recvOf
}

// checkSpecAlone validates the keys of a schedule whose handler could not
// be resolved, so its key errors are reported in the same run.
func (c *checker) checkSpecAlone(s *spec) {
	if s.has("group") {
		checkPlace(s, onJob, anyTrigger, c.r)
	} else {
		_, kind, _ := readTrigger(s, c.r)
		checkPlace(s, onSchedule, kind, c.r)
	}
}

func (c *checker) unknownGroup(s *spec, g setting, groups []Group) {
	names := make([]string, len(groups))
	for i, x := range groups {
		names[i] = x.ID
	}
	msg := "unknown group " + quote(g.str)
	if sug := suggest(g.str, names); sug != "" {
		msg += "; did you mean " + quote(sug) + "?"
	} else if len(names) == 0 {
		msg += "; declare it with //chronos:group id=" + g.str + " on the package clause or a type"
	}
	c.r.errorf(s.d.valPos(g.arg, 0), "unknown-group", "%s", msg)
}

// sortHandlers orders handlers by kind, the order of the generated code.
func (c *checker) sortHandlers(hs []*handlerInfo) []*handlerInfo {
	hs = slices.Clone(hs)
	slices.SortStableFunc(hs, func(a, b *handlerInfo) int { return cmp.Compare(a.Kind, b.Kind) })
	return hs
}

// checkKinds reports two handlers for the same task args type: the Mux
// routes a kind to one handler.
func (c *checker) checkKinds(hs []*handlerInfo) {
	for i, h := range hs {
		if h.args == nil {
			continue
		}
		for _, prev := range hs[:i] {
			if prev.args != nil && types.Identical(prev.args, h.args) {
				c.r.errorf(h.pos, "duplicate-kind", "handlers %s and %s both take *chronos.Task[%s]; a task kind has exactly one handler", prev.Kind, h.Kind, c.typeString(h.args))
				c.r.related(prev.pos, "other handler")
				break
			}
		}
	}
}

// checkNames reports generated names that collide with the package's own
// declarations or with each other.
func (c *checker) checkNames(m *Package, hs []*handlerInfo) {
	if obj := c.pkg.Scope().Lookup(EntryPoint); obj != nil {
		c.r.errorf(obj.Pos(), "name-collision", "%s is declared by hand; chronosgen generates it", EntryPoint)
	}
	generated := make(map[string]*handlerInfo)
	for _, h := range hs {
		if !h.ArgsGen {
			continue
		}
		if obj := c.pkg.Scope().Lookup(h.Args.Name); obj != nil {
			c.r.errorf(h.pos, "name-collision", "the generated args type %s of handler %s collides with a declaration of the package", h.Args.Name, h.Kind)
			c.r.related(obj.Pos(), "declared here")
		}
		if prev, ok := generated[h.Args.Name]; ok {
			c.r.errorf(h.pos, "name-collision", "handlers %s and %s would both get the generated args type %s", prev.Kind, h.Kind, h.Args.Name)
			c.r.related(prev.pos, "other handler")
			continue
		}
		generated[h.Args.Name] = h
	}
}

// receivers lists the entry point's parameters, sorted by type name, and
// points every method or field handler at its receiver.
func (c *checker) receivers(m *Package, hs []*handlerInfo, recvOf []*types.TypeName) []Receiver {
	var recvs []Receiver
	for _, h := range hs {
		if h.recv == nil {
			continue
		}
		i := slices.IndexFunc(recvs, func(r Receiver) bool { return r.TypeName == h.recv.Name() })
		if i < 0 {
			recvs = append(recvs, Receiver{TypeName: h.recv.Name()})
			i = len(recvs) - 1
		}
		if h.recvPtr {
			recvs[i].Pointer = true
		}
	}
	slices.SortFunc(recvs, func(a, b Receiver) int { return cmp.Compare(a.TypeName, b.TypeName) })
	used := map[string]bool{}
	for i := range recvs {
		recvs[i].Param = c.paramName(recvs[i].TypeName, used)
	}
	index := make(map[*types.TypeName]int, len(recvs))
	for _, h := range hs {
		if h.recv != nil {
			index[h.recv] = slices.IndexFunc(recvs, func(r Receiver) bool { return r.TypeName == h.recv.Name() })
		}
	}
	for i := range m.Handlers {
		if recv := recvOf[i]; recv != nil {
			m.Handlers[i].Receiver = index[recv]
		}
	}
	return recvs
}

// shadowed lists the import names of the generated file that a
// package-level declaration already uses.
func (c *checker) shadowed(m *Package) []string {
	names := []string{"chronos", "cron", "errors", "time"}
	m.walkTypes(func(t TypeExpr) {
		if t.PkgName != "" {
			names = append(names, t.PkgName)
		}
	})
	var out []string
	for _, n := range names {
		if c.pkg.Scope().Lookup(n) != nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// reservedParams may not name entry point parameters: they are the other
// parameters, locals and imports of the generated code.
var reservedParams = []string{"sched", "mux", "err", "g", "ctx", "t", "chronos", "context", "cron", "errors", "fmt", "time"}

// paramName picks a parameter name for a receiver type that shadows
// nothing the generated body refers to.
func (c *checker) paramName(typeName string, used map[string]bool) string {
	base := lowerFirst(typeName)
	taken := func(s string) bool {
		return used[s] || slices.Contains(reservedParams, s) || token.IsKeyword(s) ||
			c.pkg.Scope().Lookup(s) != nil || types.Universe.Lookup(s) != nil
	}
	name := base
	for n := 1; taken(name); n++ {
		name = base + "Recv"
		if n > 1 {
			name += string(rune('0' + n))
		}
	}
	used[name] = true
	return name
}

// lowerFirst lower-cases the leading capital run of an identifier, keeping
// the last capital of an acronym that starts the next word: HTTPJobs
// becomes httpJobs.
func lowerFirst(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && 'A' <= r[n] && r[n] <= 'Z' {
		n++
	}
	if n > 1 && n < len(r) {
		n--
	}
	for i := range n {
		r[i] += 'a' - 'A'
	}
	return string(r)
}

func (c *checker) sortModel(m *Package) {
	slices.SortStableFunc(m.Schedules, func(a, b Schedule) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(m.Groups, func(a, b Group) int { return cmp.Compare(a.ID, b.ID) })
	for i := range m.Groups {
		slices.SortStableFunc(m.Groups[i].Jobs, func(a, b Job) int { return cmp.Compare(a.ID, b.ID) })
	}
}

// idSet reports duplicate schedule, group and job IDs.
type idSet struct {
	r     *reporter
	where map[string]token.Pos
}

func (s *idSet) add(id string, pos token.Pos) {
	if first, ok := s.where[id]; ok {
		s.r.errorf(pos, "duplicate-id", "duplicate schedule id %q", id)
		s.r.related(first, "first defined here")
		return
	}
	if s.where == nil {
		s.where = make(map[string]token.Pos)
	}
	s.where[id] = pos
}

// isGeneratedByUs reports whether f is a file chronosgen wrote.
func isGeneratedByUs(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// Code generated by chronosgen.") {
				return true
			}
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
