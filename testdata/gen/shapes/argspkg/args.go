// Package argspkg holds task args in another package, under a package name
// that differs from its directory.
package v2args

// Import are the arguments of an import task.
type Import struct{ Source string }

// Kind implements chronos.TaskArgs.
func (Import) Kind() string { return "shapes.import" }

// Summary is a result type from another package.
type Summary struct{ Rows int }
