package benchmark

import (
	"context"
	"fmt"
)

// Impl is one flow-control implementation under test.
type Impl interface {
	// Prepare converts r, once and outside any timed loop, into the form the implementation's
	// request path takes: what an API server has at hand when its flow-control filter runs.
	Prepare(r Request) Prepared
	// Close stops the implementation's background work.
	Close()
}

// Prepared is one request ready to be handled by the Impl that prepared it.
type Prepared interface {
	// Handle admits the request (waiting in a queue if the implementation queues), runs exec
	// if the request was admitted and then finishes it. exec runs at most once, and not at
	// all when the request is rejected; Handle returns after exec has returned.
	Handle(ctx context.Context, exec func())
}

// Request describes a request the way flow control sees it.
type Request struct {
	User      string
	Groups    []string
	Verb      string
	Resource  string
	Namespace string
}

// Level is a limited priority level.
type Level struct {
	Name string
	// Priority orders the levels for this project's engine (1 is the logically highest
	// non-exempt level); upstream has no such order.
	Priority         int32
	Shares           int32
	Queues           int32
	HandSize         int32 // 0 when Queues is 1
	QueueLengthLimit int32
	// LendablePercent and BorrowingLimitPercent (nil: no limit) bound lending and borrowing
	// between levels, with the same meaning in both engines.
	LendablePercent       int32
	BorrowingLimitPercent *int32
}

// Schema is a FlowSchema that sends the requests of one user (User set) or of every member of
// one group (Group set) to a level.
type Schema struct {
	Name       string
	Precedence int32
	Level      string
	User       string
	Group      string
	// ByUser distinguishes flows by user; without it all the schema's requests are one flow.
	ByUser bool
}

// Config is the configuration every implementation is given.
type Config struct {
	ServerConcurrencyLimit int
	Levels                 []Level
	Schemas                []Schema
}

// AuthenticatedGroup is the group every user of the workload belongs to.
const AuthenticatedGroup = "system:authenticated"

// Shapes of the standard configuration (the notes in /work/shared/notes/upstream-apf-cost.md).
const (
	standardSCL        = 600
	standardLevels     = 5
	standardShares     = 10
	standardQueues     = 128
	standardHandSize   = 6
	standardQueueLimit = 100
	userPrecedenceBase = 1000
	groupPrecedence    = 9000
)

// StandardConfig returns the configuration of the per-request benchmarks with schemas
// FlowSchemas: schemas-1 match user tenant-i (i < schemas-1) each, spread round-robin over
// the levels, and the last matches group system:authenticated at the lowest precedence.
// The last level has a single queue, so its schemas have no distinguisher.
func StandardConfig(schemas int) Config {
	cfg := Config{ServerConcurrencyLimit: standardSCL}
	for i := range standardLevels {
		l := Level{
			Name:             fmt.Sprintf("level-%d", i+1),
			Priority:         int32(i + 1),
			Shares:           standardShares,
			Queues:           standardQueues,
			HandSize:         standardHandSize,
			QueueLengthLimit: standardQueueLimit,
		}
		if i == standardLevels-1 {
			l.Queues, l.HandSize = 1, 0
		}
		cfg.Levels = append(cfg.Levels, l)
	}
	for i := range schemas - 1 {
		l := cfg.Levels[i%standardLevels]
		cfg.Schemas = append(cfg.Schemas, Schema{
			Name:       fmt.Sprintf("user-%d", i),
			Precedence: int32(userPrecedenceBase + i),
			Level:      l.Name,
			User:       TenantUser(i),
			ByUser:     l.Queues > 1,
		})
	}
	cfg.Schemas = append(cfg.Schemas, authenticatedSchema(cfg.Levels[0].Name))
	return cfg
}

// OverloadConfig returns the configuration of the overload scenarios: one level with 128
// queues, hand size 6 and queue length limit 100 that takes every request, flows by user.
func OverloadConfig(scl int) Config {
	return Config{
		ServerConcurrencyLimit: scl,
		Levels: []Level{{
			Name:             "shared",
			Priority:         1,
			Shares:           standardShares,
			Queues:           standardQueues,
			HandSize:         standardHandSize,
			QueueLengthLimit: standardQueueLimit,
		}},
		Schemas: []Schema{authenticatedSchema("shared")},
	}
}

// Shapes of the borrowing scenario: two levels of equal shares, so large that upstream's
// mandatory catch-all level (5 shares) and ours' unassigned part (100 shares in the ACV
// formula) are small: with SCL 40 each level's nominal limit is 20 in both engines
// (ceil(40*1000/2005) and ceil(40*1000/2100)), and the catch-all holds 1 seat upstream.
const (
	borrowingSCL      = 40
	borrowingShares   = 1000
	borrowingLendable = 50
)

// BorrowingConfig returns the configuration of the borrowing scenario: user heavy goes to
// level borrower (lends nothing, may borrow without limit), every other user to level lender
// (lends 50% of its nominal 20 seats, so it keeps 10), flows by user.
func BorrowingConfig() Config {
	level := func(name string, priority, lend int32) Level {
		return Level{Name: name, Priority: priority, Shares: borrowingShares, Queues: standardQueues,
			HandSize: standardHandSize, QueueLengthLimit: standardQueueLimit, LendablePercent: lend}
	}
	return Config{
		ServerConcurrencyLimit: borrowingSCL,
		Levels:                 []Level{level("borrower", 1, 0), level("lender", 2, borrowingLendable)},
		Schemas: []Schema{
			{Name: "heavy", Precedence: userPrecedenceBase, Level: "borrower", User: heavyUser, ByUser: true},
			authenticatedSchema("lender"),
		},
	}
}

func authenticatedSchema(level string) Schema {
	return Schema{
		Name:       "authenticated",
		Precedence: groupPrecedence,
		Level:      level,
		Group:      AuthenticatedGroup,
		ByUser:     true,
	}
}

// TenantUser is the name of the k-th user of the workload.
func TenantUser(k int) string { return fmt.Sprintf("tenant-%d", k) }

// TenantRequests returns flows requests: a GET of pods by tenant-k in namespace ns-k for
// k in [0, flows).
func TenantRequests(flows int) []Request {
	groups := []string{AuthenticatedGroup}
	reqs := make([]Request, flows)
	for k := range reqs {
		reqs[k] = Request{
			User:      TenantUser(k),
			Groups:    groups,
			Verb:      "get",
			Resource:  "pods",
			Namespace: fmt.Sprintf("ns-%d", k),
		}
	}
	return reqs
}

// PrepareAll prepares every request of reqs for impl.
func PrepareAll(impl Impl, reqs []Request) []Prepared {
	out := make([]Prepared, len(reqs))
	for i, r := range reqs {
		out[i] = impl.Prepare(r)
	}
	return out
}

// Width is the number of seats a request occupies: 1 for read-only verbs, 2 otherwise (the
// proposal's "Resource Limits and Request Widths").
func Width(verb string) int {
	switch verb {
	case "get", "list", "watch":
		return 1
	}
	return 2
}
