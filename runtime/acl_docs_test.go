package chronos_test

import (
	"os"
	"strings"
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
)

// docs/security.md quotes ExampleACLRules's output and explains every
// command of the rules in its table, so the page cannot fall behind them.
func TestTheSecurityDocQuotesACLRules(t *testing.T) {
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if line := "ACL SETUSER chronos on >PASSWORD " + strings.Join(chronos.ACLRules(), " "); !strings.Contains(doc, "\n"+line+"\n") {
		t.Errorf("docs/security.md does not quote the line of ExampleACLRules:\n%s", line)
	}
	for _, r := range chronos.ACLRules() {
		if !strings.HasPrefix(r, "+") {
			continue
		}
		cell := "`" + strings.ReplaceAll(r, "|", `\|`) + "`" // a | in a table cell is escaped
		if !strings.Contains(doc, "| "+cell+" |") && !strings.Contains(doc, "| "+cell+", ") && !strings.Contains(doc, ", "+cell+" |") {
			t.Errorf("docs/security.md has no table row for %s", r)
		}
	}
}
