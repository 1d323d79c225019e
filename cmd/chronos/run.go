package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the operation failed: not found, Redis error
	exitUsage = 2 // bad command line
)

// defaultRedisURL is used when neither -redis nor REDIS_URL is set.
const defaultRedisURL = "redis://localhost:6379/0"

// command is one subcommand. Each command group lives in its own file and
// contributes its entries to commands.
type command struct {
	name     string
	synopsis string // arguments after the name, for usage lines
	summary  string
	run      func(ctx context.Context, c *cli, args []string) error
}

// commands returns the subcommands in the order usage lists them.
func commands() []command {
	var cs []command
	cs = append(cs, scheduleCommands()...)
	cs = append(cs, healthCommands()...)
	cs = append(cs, controlCommands()...)
	cs = append(cs, retireCommands()...)
	cs = append(cs, clusterCommands()...)
	cs = append(cs, queueCommands()...)
	cs = append(cs, taskCommands()...)
	cs = append(cs, migrateCommands()...)
	cs = append(cs, webCommands()...)
	return cs
}

// cli is the state of one invocation: its output streams, its global flags
// and its lazily opened connection. run makes a new one each time, so
// nothing outlives a call.
type cli struct {
	stdout, stderr io.Writer

	redisURL string
	conn     connFlags
	ns       string
	json     bool
	timeout  time.Duration
	// timeoutSet reports that -timeout was given (migrate has no limit
	// otherwise).
	timeoutSet bool

	cmd    *command // the command being run, for usage errors
	rdb    redis.UniversalClient
	topo   topology
	insp   *chronos.Inspector
	ctx    context.Context    // the -timeout context connect returned
	cancel context.CancelFunc // of ctx
}

// usageError is a bad command line: run prints it with the command's usage
// line and exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run is the whole command, for tests: it never calls os.Exit and keeps no
// state between calls.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr, timeout: 30 * time.Second}
	defer c.close()

	fs := c.flagSet("chronos")
	fs.Usage = func() { c.printUsage(stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			c.timeoutSet = true
		}
	})
	if fs.NArg() == 0 {
		c.printUsage(stderr)
		return exitUsage
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		c.printUsage(stdout)
		return exitOK
	}
	for _, cmd := range commands() {
		if cmd.name == name {
			c.cmd = &cmd
			return c.exec(ctx, rest)
		}
	}
	fmt.Fprintf(stderr, "chronos: unknown command %q (run 'chronos help' for the list)\n", name)
	return exitUsage
}

// exec runs c.cmd with args and turns its error into an exit code.
func (c *cli) exec(ctx context.Context, args []string) int {
	err := c.cmd.run(ctx, c, args)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errFlagParse):
		return exitUsage // the flag package has printed the error and usage
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "chronos %s: %s\nusage: %s\n", c.cmd.name, ue.msg, c.usageLine())
		return exitUsage
	default:
		fmt.Fprintln(c.stderr, oneLine(c.describe(c.orNoNamespace(err))))
		return exitFail
	}
}

// orNoNamespace replaces a not-found error by a noNamespaceError when the
// namespace holds nothing at all: then the namespace is what was mistyped.
func (c *cli) orNoNamespace(err error) error {
	var nf *notFoundError
	if !errors.As(err, &nf) || c.insp == nil || c.ctx.Err() != nil {
		return err
	}
	if nerr := c.requireNamespace(c.ctx); nerr != nil {
		var ns *noNamespaceError
		if errors.As(nerr, &ns) {
			return nerr
		}
	}
	return err
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// flagSet returns a flag set that also accepts the global flags, so they
// may come before or after the command; values given before it are the
// defaults after it.
func (c *cli) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	c.addConnFlags(fs)
	fs.StringVar(&c.ns, "ns", c.ns, "chronos `namespace` (default \"chronos\")")
	fs.BoolVar(&c.json, "json", c.json, "print JSON instead of a table")
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "give up on Redis after this `duration` (0: never)")
	return fs
}

// errFlagParse reports a flag error the flag package has already printed.
var errFlagParse = errors.New("bad flags")

// parse parses args with fs, flags and positional arguments in any order
// ("--" ends the flags), and checks that exactly want positional arguments,
// named by names, were given.
func (c *cli) parse(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "usage: %s\n\n%s\n\nflags:\n", c.usageLine(), c.cmd.summary)
		fs.PrintDefaults()
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errFlagParse
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case len(pos) < len(names):
		return nil, usagef("missing %s", strings.Join(names[len(pos):], " "))
	case len(pos) > len(names):
		return nil, usagef("unexpected argument %q", pos[len(names)])
	}
	for k, p := range pos {
		if p == "" {
			return nil, usagef("empty %s", names[k])
		}
	}
	return pos, nil
}

func (c *cli) namespace() string {
	if c.ns == "" {
		return "chronos"
	}
	return c.ns
}

// usageLine is the synopsis of the command being run.
func (c *cli) usageLine() string {
	return strings.TrimSpace("chronos " + c.cmd.name + " " + c.cmd.synopsis)
}

func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: chronos %s COMMAND [ARGS]\n\ncommands:\n", globalSynopsis)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace(cmd.name+" "+cmd.synopsis), cmd.summary)
	}
	fmt.Fprint(w, connectionHelp)
	fmt.Fprintln(w, "\nExit status: 0 ok, 1 failed, 2 usage. See docs/cli.md.")
}

// globalSynopsis lists the flags every command takes.
const globalSynopsis = "[-redis URL] [-cluster | -sentinel-master NAME] [-tls-ca FILE] [-tls-cert FILE -tls-key FILE] " +
	"[-ns NAMESPACE] [-json] [-timeout D]"

// connectionHelp explains -redis and the flags that go with it.
const connectionHelp = `
Connecting (-redis defaults to $REDIS_URL, then ` + defaultRedisURL + `):
  one server     redis://[[USER]:PASSWORD@]HOST:PORT[/DB]
  Redis Cluster  redis://[[USER]:PASSWORD@]HOST:PORT?addr=HOST2:PORT2[&addr=...]   or one node with -cluster
  Sentinel       redis://SENTINEL:26379?addr=SENTINEL2:26379&master_name=NAME[&password=MASTER_PASSWORD]
                 or -sentinel-master NAME; the URL's user:password@ is the sentinels'
  TLS            rediss://... with -tls-ca FILE for a private CA, -tls-cert and -tls-key for a client certificate
`
