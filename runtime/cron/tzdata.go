package cron

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"sync"
	"time"
)

// TZDataVersion is the IANA tz database release embedded in this package.
// Every zone a schedule names is read from it, never from the host, so the
// generator (at go generate time) and every replica of a service (at run
// time) compute the same fire times whatever /usr/share/zoneinfo or
// $ZONEINFO hold on each machine. Go's time/tzdata would not do: the time
// package prefers the host's files and uses the embedded copy only as a
// fallback. The copy is Go's lib/time/zoneinfo.zip; update.sh refreshes it.
const TZDataVersion = "2025c"

//go:embed zoneinfo.zip
var zoneinfoZip []byte

var zoneArchive = sync.OnceValues(func() (*zip.Reader, error) {
	return zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
})

// loadEmbeddedZone reads zone name from the embedded tz database.
func loadEmbeddedZone(name string) (*time.Location, error) {
	archive, err := zoneArchive()
	if err != nil {
		return nil, fmt.Errorf("embedded tz database: %w", err)
	}
	f, err := archive.Open(name) // rejects "..", absolute and malformed paths
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %s", name)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("embedded tz database: %s: %w", name, err)
	}
	return time.LoadLocationFromTZData(name, data)
}
