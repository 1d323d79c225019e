package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Change is what writing a File did, or would do.
type Change int

const (
	Unchanged Change = iota // the file on disk already has these bytes
	Created                 // the file did not exist
	Updated                 // the file had other bytes
	Deleted                 // the package has no directives left
)

// String returns the change in words, as -check and -v print it.
func (c Change) String() string {
	return [...]string{"unchanged", "created", "updated", "deleted"}[c]
}

// Diff compares f with the disk and says what Write would do.
func (f File) Diff() (Change, error) {
	old, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.Content == nil {
			return Unchanged, nil
		}
		return Created, nil
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", f.Path, err)
	case f.Content == nil:
		return Deleted, nil
	case bytes.Equal(old, f.Content):
		return Unchanged, nil
	}
	return Updated, nil
}

// Write brings the disk in line with f: unchanged bytes are not rewritten
// (the file keeps its mtime, so builds stay cached), new bytes go to a
// temporary file in the same directory that is renamed over the target, so
// a reader never sees half a file, and a nil Content deletes the file.
func (f File) Write() (Change, error) {
	ch, err := f.Diff()
	if err != nil || ch == Unchanged {
		return ch, err
	}
	if ch == Deleted {
		if err := os.Remove(f.Path); err != nil {
			return ch, fmt.Errorf("delete stale %s: %w", f.Path, err)
		}
		return ch, nil
	}
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, ".chronosgen-*.tmp")
	if err != nil {
		return ch, fmt.Errorf("write %s: %w", f.Path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(f.Content); err != nil {
		tmp.Close()
		return ch, fmt.Errorf("write %s: %w", f.Path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return ch, fmt.Errorf("write %s: %w", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return ch, fmt.Errorf("write %s: %w", f.Path, err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return ch, fmt.Errorf("write %s: %w", f.Path, err)
	}
	return ch, nil
}
