package trigger

import (
	"errors"
	"testing"
)

func TestPolicyStringIsTheDirectiveName(t *testing.T) {
	want := map[Policy]string{
		PolicySmart:          "smartPolicy",
		PolicyIgnoreMisfires: "ignoreMisfires",
		PolicyFireOnceNow:    "fireOnceNow",
		PolicyDoNothing:      "doNothing",
		PolicyFireNow:        "fireNow",
		PolicyRescheduleNowWithExistingRepeatCount:  "rescheduleNowWithExistingRepeatCount",
		PolicyRescheduleNowWithRemainingRepeatCount: "rescheduleNowWithRemainingRepeatCount",
		PolicyRescheduleNextWithExistingCount:       "rescheduleNextWithExistingCount",
		PolicyRescheduleNextWithRemainingCount:      "rescheduleNextWithRemainingCount",
		Policy(42):                                  "Policy(42)",
	}
	for p, name := range want {
		if got := p.String(); got != name {
			t.Errorf("Policy(%d).String() = %q; want %q", int(p), got, name)
		}
	}
}

func TestParsePolicyRoundTrips(t *testing.T) {
	for _, k := range []Kind{KindCron, KindSimple} {
		for _, p := range Policies(k) {
			got, err := ParsePolicy(p.String(), k)
			if err != nil || got != p {
				t.Errorf("ParsePolicy(%q, %v) = %v, %v; want %v", p, k, got, err, p)
			}
		}
	}
}

func TestParsePolicyEmptyIsSmart(t *testing.T) {
	for _, k := range []Kind{KindCron, KindSimple} {
		if p, err := ParsePolicy("", k); err != nil || p != PolicySmart {
			t.Errorf("ParsePolicy(\"\", %v) = %v, %v; want smartPolicy", k, p, err)
		}
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		want    error
		message string
	}{
		{"fireNow", KindCron, ErrPolicyKind,
			"misfire policy fireNow applies to simple triggers; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing"},
		{"doNothing", KindSimple, ErrPolicyKind,
			"misfire policy doNothing applies to cron triggers; simple triggers accept ignoreMisfires, smartPolicy, fireNow, " +
				"rescheduleNowWithExistingRepeatCount, rescheduleNowWithRemainingRepeatCount, rescheduleNextWithExistingCount, " +
				"rescheduleNextWithRemainingCount"},
		{"smart", KindCron, ErrUnknownPolicy,
			`unknown misfire policy "smart"; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing`},
		{"DoNothing", KindCron, ErrUnknownPolicy,
			`unknown misfire policy "DoNothing"; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.kind.String(), func(t *testing.T) {
			_, err := ParsePolicy(tt.name, tt.kind)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParsePolicy(%q, %v) = %v; want %v", tt.name, tt.kind, err, tt.want)
			}
			if err.Error() != tt.message {
				t.Fatalf("message = %q; want %q", err, tt.message)
			}
		})
	}
	if _, err := ParsePolicy("doNothing", Kind(0)); err == nil {
		t.Fatal("ParsePolicy with an unknown kind succeeded")
	}
}

func TestPoliciesPerKind(t *testing.T) {
	if got := len(Policies(KindCron)); got != 4 {
		t.Errorf("cron has %d policies; want 4", got)
	}
	if got := len(Policies(KindSimple)); got != 7 {
		t.Errorf("simple has %d policies; want 7", got)
	}
	if Policies(Kind(0)) != nil {
		t.Error("an unknown kind has policies")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindCron: "cron", KindSimple: "simple", Kind(0): "Kind(0)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q; want %q", int(k), got, want)
		}
	}
}
