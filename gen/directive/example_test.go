package directive_test

import (
	"fmt"

	"github.com/chronos-go/chronos/gen/directive"
)

func ExampleParse() {
	text := `cron="0 0 2 * * ?" tz=Asia/Seoul misfire=doNothing`
	args, errs := directive.Parse(text)
	for _, a := range args {
		fmt.Printf("%s = %q (value at byte %d)\n", a.Key, a.Value, a.ValOff)
	}
	fmt.Println(len(errs), "errors")
	// Output:
	// cron = "0 0 2 * * ?" (value at byte 5)
	// tz = "Asia/Seoul" (value at byte 22)
	// misfire = "doNothing" (value at byte 41)
	// 0 errors
}

func ExampleArg_Offset() {
	// Errors found inside a value map back to the directive text, through
	// quotes and escapes: here the bad day-of-week "8".
	text := `cron="0\t0 2 * * 8"`
	args, _ := directive.Parse(text)
	cron := args[0]
	bad := len(cron.Value) - 1 // the cron parser reports byte 10 of "0\t0 2 * * 8"
	fmt.Printf("value byte %d is text byte %d: %c\n", bad, cron.Offset(bad), text[cron.Offset(bad)])
	// Output:
	// value byte 10 is text byte 17: 8
}
