package chronos_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// WelcomeEmail is the payload of a task: a plain struct with a stable kind.
type WelcomeEmail struct {
	UserID int `json:"user_id"`
}

func (WelcomeEmail) Kind() string { return "welcome_email" }

// exampleRedis connects to REDIS_URL, for examples that need a server.
func exampleRedis() redis.UniversalClient {
	opt, err := redis.ParseURL(os.Getenv("REDIS_URL"))
	if err != nil {
		log.Fatal(err)
	}
	return redis.NewClient(opt)
}

func ExampleNewServer() {
	rdb := exampleRedis()

	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[WelcomeEmail]) error {
		fmt.Println("sending welcome email to user", t.Args.UserID)
		return nil
	})

	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Concurrency: 20,
		Queues:      map[string]int{"critical": 6, "default": 3, "low": 1},
	})
	if err := srv.Start(context.Background(), mux); err != nil {
		log.Fatal(err)
	}
	// ... serve until told to stop, then give running tasks time to finish.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Print(err)
	}
}

func ExampleClient_Enqueue() {
	client := chronos.NewClient(exampleRedis())
	ctx := context.Background()

	// Run as soon as a worker is free.
	if _, err := client.Enqueue(ctx, WelcomeEmail{UserID: 42}); err != nil {
		log.Fatal(err)
	}

	// Run in an hour, at most once per user per day, giving up after 3 retries.
	info, err := client.Enqueue(ctx, WelcomeEmail{UserID: 42},
		chronos.WithProcessIn(time.Hour),
		chronos.WithDedupKey("welcome:42", 24*time.Hour),
		chronos.WithMaxRetry(3),
		chronos.WithQueue("low"),
	)
	if err != nil {
		log.Fatal(err)
	}
	if info.Duplicate {
		fmt.Println("already scheduled as task", info.ID)
	}
}

func ExampleAddHandler() {
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[WelcomeEmail]) error {
		if t.Attempt > 1 {
			log.Printf("retrying welcome email for user %d (attempt %d of %d)", t.Args.UserID, t.Attempt, t.MaxRetry+1)
		}
		return nil // returning an error retries the task with backoff
	})
	fmt.Println("handlers registered")
	// Output: handlers registered
}

// A scheduled job often needs nothing but a context. Its args type still
// names the kind; AddFunc adapts the function.
func ExampleAddFunc() {
	mux := chronos.NewMux()
	chronos.AddFunc[Nightly](mux, func(ctx context.Context) error {
		return nil // build the report
	})
	fmt.Println("registered")
	// Output: registered
}

// Handlers can return a result; it is stored with the run record and
// logged with the success record.
func ExampleAddHandlerWithResult() {
	type sent struct {
		MessageID string `json:"message_id"`
	}
	mux := chronos.NewMux()
	chronos.AddHandlerWithResult(mux, func(ctx context.Context, t *chronos.Task[WelcomeEmail]) (sent, error) {
		if t.Args.UserID == 0 {
			// No retry can fix this: straight to the dead letters.
			return sent{}, fmt.Errorf("no user: %w", chronos.ErrSkipRetry)
		}
		return sent{MessageID: "m-1"}, nil
	}, chronos.WithDefaultTimeout(30*time.Second), chronos.WithBackoff(chronos.ExponentialBackoff(5*time.Second, 10*time.Minute)))
	fmt.Println("registered")
	// Output: registered
}

func ExampleInspector_RequeueDead() {
	insp := chronos.NewInspector(exampleRedis())
	ctx := context.Background()
	dead, err := insp.ListDead(ctx, chronos.ListOptions{Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range dead {
		fmt.Printf("%s %s died after %d runs: %s\n", d.ID, d.Kind, d.Attempts, d.Reason)
		if _, err := insp.RequeueDead(ctx, d.ID); err != nil {
			log.Print(err)
		}
	}
}
