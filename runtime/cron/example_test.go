package cron_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

func ExampleParse() {
	e, err := cron.Parse("0 0 1 L * ?") // 01:00 on the last day of every month
	if err != nil {
		panic(err)
	}
	at := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		at = e.Next(at, time.UTC)
		fmt.Println(at.Format("2006-01-02 15:04"))
	}
	// Output:
	// 2024-02-29 01:00
	// 2024-03-31 01:00
	// 2024-04-30 01:00
}

func ExampleParse_standard() {
	e := cron.MustParse("30 2 * * 1-5") // 5 fields: 1-5 is Monday to Friday
	fmt.Println(e.Dialect(), e.Next(time.Date(2025, 1, 3, 12, 0, 0, 0, time.UTC), nil).Format("Mon 2006-01-02 15:04"))
	// Output: standard Mon 2025-01-06 02:30
}

func ExampleParse_error() {
	_, err := cron.Parse("0 0 2 ? * 0")
	var se *cron.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Field, se.Offset)
		fmt.Println(err)
	}
	// Output:
	// day-of-week 10
	// cron "0 0 2 ? * 0": day-of-week 0 is out of range 1-7 (SUN-SAT); in a 6- or 7-field (Quartz) expression Sunday is 1 and Saturday is 7, unlike 5-field cron where Sunday is 0 (column 11)
}

func ExampleSchedule_Next() {
	ny, err := cron.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	daily := cron.MustParse("0 30 2 * * ?")
	after := time.Date(2025, 3, 8, 12, 0, 0, 0, ny) // clocks skip 02:00-03:00 on 9 March

	quartz := cron.Schedule{Expr: daily, Location: ny}
	shift := cron.Schedule{Expr: daily, Location: ny, DST: cron.DSTShiftGap}
	fmt.Println(quartz.Next(after))
	fmt.Println(shift.Next(after))
	// Output:
	// 2025-03-10 02:30:00 -0400 EDT
	// 2025-03-09 03:00:00 -0400 EDT
}

func ExampleLoadLocation() {
	_, err := cron.LoadLocation("Local")
	fmt.Println(errors.Is(err, cron.ErrInvalidZone))
	// Output: true
}
