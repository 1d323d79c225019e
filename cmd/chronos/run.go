package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
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
	cs = append(cs, controlCommands()...)
	cs = append(cs, clusterCommands()...)
	cs = append(cs, taskCommands()...)
	cs = append(cs, webCommands()...)
	return cs
}

// cli is the state of one invocation: its output streams, its global flags
// and its lazily opened connection. run makes a new one each time, so
// nothing outlives a call.
type cli struct {
	stdout, stderr io.Writer

	redisURL string
	ns       string
	json     bool
	timeout  time.Duration

	cmd    *command // the command being run, for usage errors
	rdb    *redis.Client
	cancel context.CancelFunc // of the -timeout context
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
		fmt.Fprintln(c.stderr, oneLine(c.describe(err)))
		return exitFail
	}
}

// describe turns an operation error into the message an operator reads.
func (c *cli) describe(err error) string {
	var nf *notFoundError
	switch {
	case errors.As(err, &nf):
		return fmt.Sprintf("chronos %s: no %s %q in namespace %q", c.cmd.name, nf.what, nf.id, c.namespace())
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("chronos %s: no answer from %s within %v: %v", c.cmd.name, redactURL(c.redisURL), c.timeout, strings.TrimPrefix(err.Error(), "chronos: "))
	}
	return fmt.Sprintf("chronos %s: %s", c.cmd.name, strings.TrimPrefix(err.Error(), "chronos: "))
}

// notFoundError reports that the schedule or task an operator named does
// not exist; describe prints it without the layers of wrapping.
type notFoundError struct {
	what, id string
	err      error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("%s %q not found: %v", e.what, e.id, e.err)
}
func (e *notFoundError) Unwrap() error { return e.err }

// checkFound wraps err in a notFoundError when it wraps one of the
// Inspector's not-found sentinels.
func checkFound(err error, what, id string) error {
	if errors.Is(err, chronos.ErrScheduleNotFound) || errors.Is(err, chronos.ErrTaskNotFound) {
		return &notFoundError{what: what, id: id, err: err}
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
	fs.StringVar(&c.redisURL, "redis", c.redisURL, "Redis `URL` (default $REDIS_URL, then "+defaultRedisURL+")")
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

// connect returns an Inspector on the Redis of -redis and ctx bounded by
// -timeout. Commands call it once their command line is parsed, since
// both flags may follow the command.
func (c *cli) connect(ctx context.Context) (context.Context, *chronos.Inspector, error) {
	// Resolved only now, so that -h never prints a password from REDIS_URL.
	if c.redisURL == "" {
		c.redisURL = cmp.Or(os.Getenv("REDIS_URL"), defaultRedisURL)
	}
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return ctx, nil, usagef("-redis %s: %v", redactURL(c.redisURL), err)
	}
	opt.ContextTimeoutEnabled = true // so that -timeout cuts a read short
	c.rdb = redis.NewClient(opt)
	if c.timeout > 0 {
		ctx, c.cancel = context.WithTimeout(ctx, c.timeout)
	}
	var opts []chronos.ClientOption
	if c.ns != "" {
		opts = append(opts, chronos.WithNamespace(c.ns))
	}
	return ctx, chronos.NewInspector(c.rdb, opts...), nil
}

// close releases what connect took.
func (c *cli) close() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.rdb != nil {
		_ = c.rdb.Close()
	}
}

func (c *cli) namespace() string {
	if c.ns == "" {
		return "chronos"
	}
	return c.ns
}

// redactURL hides the password of a Redis URL, for error messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the Redis URL"
	}
	return u.Redacted()
}

// usageLine is the synopsis of the command being run.
func (c *cli) usageLine() string {
	return strings.TrimSpace("chronos " + c.cmd.name + " " + c.cmd.synopsis)
}

func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: chronos [-redis URL] [-ns NAMESPACE] [-json] [-timeout D] COMMAND [ARGS]\n\ncommands:\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace(cmd.name+" "+cmd.synopsis), cmd.summary)
	}
	fmt.Fprintf(w, "\nThe Redis URL defaults to $REDIS_URL, then %s. Exit status: 0 ok, 1 failed, 2 usage.\n", defaultRedisURL)
}
