package gen

import "time"

// The model is what the emitter sees: plain, sorted data with no maps, no
// go/ast or go/types values and no token positions (source positions are
// already reduced to file base names and lines). Two runs over the same
// input produce equal models, hence equal bytes.

// Package is everything generated for one Go package.
type Package struct {
	Path string // import path
	Name string // package name

	Receivers []Receiver // parameters of the entry point, sorted by TypeName
	Handlers  []Handler  // sorted by Kind
	Schedules []Schedule // schedules with their own trigger, sorted by ID
	Groups    []Group    // sorted by ID

	// Shadowed are names of imports the generated file needs that the
	// package itself declares; those imports get another name. Sorted.
	Shadowed []string
}

// Receiver is a value the entry point needs to reach handlers: the receiver
// of handler methods, or the struct holding handler fields.
type Receiver struct {
	TypeName string // type name in the package
	Param    string // parameter name in the entry point
	Pointer  bool   // parameter is *TypeName
}

// Handler is one function registered on the task Mux.
type Handler struct {
	Kind     string // task kind; for generated Args also the Kind() result
	Receiver int    // index into Package.Receivers, or -1 for a package-level func
	Name     string // method, field or function name
	Field    bool   // a func-typed field of a //chronos:schedules struct

	// Args is the task argument type: the handler's own A in *chronos.Task[A],
	// or, when the handler takes only a context, a generated struct.
	Args      TypeExpr
	ArgsGen   bool      // Args is generated (Args.Name is declared in the output)
	TakesTask bool      // the handler takes (ctx, *chronos.Task[A])
	Result    *TypeExpr // R of an (R, error) result, or nil
}

// TypeExpr is a Go type the emitter spells out.
type TypeExpr struct {
	Pointer bool       // *T
	Path    string     // import path of a named type; "" for the package itself or predeclared
	PkgName string     // package name for Path
	Name    string     // type name (named or predeclared)
	Args    []TypeExpr // type arguments of an instantiated generic type
	Elem    *TypeExpr  // slice/array/map element (with Name == "")
	Key     *TypeExpr  // map key
	Slice   bool
	Len     int64 // array length when > 0 with Elem set
	Map     bool
}

// Trigger says when a schedule or group fires: Cron, or a simple trigger.
type Trigger struct {
	Cron string // cron expression; empty for simple triggers

	Every      time.Duration
	StartDelay time.Duration
	Start, End time.Time // UTC; zero when unset
	Repeat     int       // repeats after the first fire; repeatForever = -1
	Simple     bool      // needs chronos.Simple (more than an interval)
}

// Option is one key=value that becomes a chronos option, in key-table order.
type Option struct {
	Key  string
	Str  string
	Int  int
	Bool bool
	Dur  time.Duration
}

// Source is where a schedule was declared.
type Source struct {
	File string // base name
	Line int
}

// Schedule is one trigger firing one handler.
type Schedule struct {
	ID      string
	Handler int // index into Package.Handlers
	Trigger Trigger
	Options []Option
	Source  Source
}

// Group is one trigger firing several jobs.
type Group struct {
	ID      string
	Trigger Trigger
	Options []Option
	Source  Source
	Jobs    []Job // sorted by ID
}

// Job is one handler in a Group.
type Job struct {
	ID      string
	Handler int
	Options []Option // enqueue options only
	Source  Source
}

// walkTypes calls f on every type the handlers' args and results spell out,
// type arguments, elements and keys included, in handler order: what the
// generated file may need to import.
func (m *Package) walkTypes(f func(TypeExpr)) {
	var walk func(t TypeExpr)
	walk = func(t TypeExpr) {
		f(t)
		for _, a := range t.Args {
			walk(a)
		}
		if t.Elem != nil {
			walk(*t.Elem)
		}
		if t.Key != nil {
			walk(*t.Key)
		}
	}
	for _, h := range m.Handlers {
		walk(h.Args)
		if h.Result != nil {
			walk(*h.Result)
		}
	}
}
