package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// The emit functions of the option keys. Each row of the key table
// (keys.go) that becomes a chronos option names one of these; it renders
// one written setting as the option the generated code passes.

func emitTimeZone(o Option) jen.Code { return runtimeCall("WithTimeZone", jen.Lit(o.Str)) }

func emitDST(o Option) jen.Code {
	return runtimeCall("WithDST", jen.Qual(cronPath, "DST"+upperFirst(o.Str)))
}

func emitMisfire(o Option) jen.Code { return runtimeCall("WithMisfire", jen.Lit(o.Str)) }

func emitIsolated(o Option) jen.Code { return runtimeCall("WithIsolated", jen.Lit(o.Bool)) }

func emitOverlap(o Option) jen.Code {
	return runtimeCall("WithOverlap", jen.Qual(RuntimePath, "Overlap"+upperFirst(o.Str)))
}

func emitLateAfter(o Option) jen.Code { return runtimeCall("WithLateAfter", durationCode(o.Dur)) }

func emitFailingAfter(o Option) jen.Code { return runtimeCall("WithFailingAfter", jen.Lit(o.Int)) }

func emitQueue(o Option) jen.Code { return runtimeCall("WithQueue", jen.Lit(o.Str)) }

func emitMaxRetry(o Option) jen.Code { return runtimeCall("WithMaxRetry", jen.Lit(o.Int)) }

func emitTimeout(o Option) jen.Code { return runtimeCall("WithTimeout", durationCode(o.Dur)) }

func emitProcessIn(o Option) jen.Code { return runtimeCall("WithProcessIn", durationCode(o.Dur)) }

func runtimeCall(name string, args ...jen.Code) *jen.Statement {
	return jen.Qual(RuntimePath, name).Call(args...)
}

// options renders settings as chronos options, in the order given (which
// Check makes key-table order).
func options(opts []Option) []jen.Code {
	out := make([]jen.Code, 0, len(opts))
	for _, o := range opts {
		out = append(out, lookupKey(o.Key).emit(o))
	}
	return out
}

// checkOptions reports an option of m that no key of the table emits. Check
// never builds one; a model written by hand can.
func checkOptions(m *Package) error {
	var all []Option
	for _, s := range m.Schedules {
		all = append(all, s.Options...)
	}
	for _, g := range m.Groups {
		all = append(all, g.Options...)
		for _, j := range g.Jobs {
			all = append(all, j.Options...)
		}
	}
	for _, o := range all {
		if k := lookupKey(o.Key); k == nil || k.emit == nil {
			return fmt.Errorf("option %q: no key of the table emits it as an option", o.Key)
		}
	}
	return nil
}
