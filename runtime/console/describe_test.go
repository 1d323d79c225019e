package console

import (
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestTriggersAreDescribedInWords(t *testing.T) {
	cases := []struct {
		trigger, spec, want string
	}{
		{"cron", "0 0 2 * * ?", "at 02:00 every day"},
		{"cron", "0 30 9 ? * MON-FRI", "at 09:30 on Monday to Friday"},
		{"cron", "30 9 * * 1-5", "at 09:30 on Monday to Friday"},  // 5 fields: 1 = Monday
		{"cron", "0 0 9 ? * 2-6", "at 09:00 on Monday to Friday"}, // Quartz: 1 = Sunday
		{"cron", "0 0 1 L * ?", "at 01:00 on the last day of the month"},
		{"cron", "0 0 12 ? * 6#3", "at 12:00 on the third Friday of the month"},
		{"cron", "0 0 12 ? * 6L", "at 12:00 on the last Friday of the month"},
		{"cron", "0 0 8 15W * ?", "at 08:00 on the weekday nearest day 15 of the month"},
		{"cron", "0 0 9,13,17 * * ?", "at 09:00, 13:00 and 17:00 every day"},
		{"cron", "*/5 * * * *", "every 5 minutes"},
		{"cron", "0 */15 9-17 * * ?", "every 15 minutes from 09:00 to 17:59"},
		{"cron", "* * * * * ?", "every second"},
		{"cron", "*/10 * * * * ?", "every 10 seconds"},
		{"cron", "0 15 * * * ?", "every hour at minute 15"},
		{"cron", "0 0 0 1 JAN ? 2030", "at 00:00 on day 1 of the month in January in 2030"},
		{"cron", "0 0 6 1,15 * ?", "at 06:00 on days 1 and 15 of the month"},
		{"cron", "@daily", "at 00:00 every day"},
		{"cron", "0 0 0/6 * * ?", "every 6 hours from 00:00"},
		{"cron", "0 0 2 * * ?", "at 02:00 every day"},
		{"interval", "1s", "every second"},
		{"interval", "30s", "every 30 seconds"},
		{"interval", "1h0m0s", "every hour"},
		{"interval", "1h30m0s", "every 90 minutes"},
		{"simple", "every=10s;repeat=4;start=1796062228000", "5 times, every 10 seconds from 2026-11-30 18:10:28Z"},
		{"simple", "every=1m0s;repeat=-1;delay=30s", "every minute from 30 seconds after registration"},
		{"simple", "every=0s;repeat=0;delay=1h0m0s", "once, one hour after registration"},
		// No words: the page shows the trigger as written.
		{"cron", "0 0-5,7 1/2 * * ?", ""},
		{"cron", "not a cron", ""},
	}
	for _, c := range cases {
		got := describeTrigger(&chronos.ScheduleInfo{Trigger: c.trigger, Spec: c.spec})
		if got != c.want {
			t.Errorf("%s %q: %q, want %q", c.trigger, c.spec, got, c.want)
		}
	}
}
