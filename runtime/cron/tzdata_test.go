package cron

import (
	"errors"
	"testing"
	"time"
)

func TestZonesComeFromTheEmbeddedDatabaseNotTheHost(t *testing.T) {
	t.Setenv("ZONEINFO", t.TempDir()) // an empty zone directory must not matter
	zoneCache.Delete("Asia/Seoul")
	loc, err := LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	if _, off := time.Date(2026, 1, 1, 0, 0, 0, 0, loc).Zone(); off != 9*3600 {
		t.Errorf("Asia/Seoul offset %d, want +09:00", off)
	}
}

func TestZoneNamesThatAreNotZonesAreRejected(t *testing.T) {
	for _, name := range []string{"../../etc/passwd", "/etc/localtime", "Mars/Olympus", "America/", "Local"} {
		if _, err := LoadLocation(name); !errors.Is(err, ErrInvalidZone) {
			t.Errorf("LoadLocation(%q) = %v, want ErrInvalidZone", name, err)
		}
	}
}
