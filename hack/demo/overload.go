package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	demoSeats       = 8
	demoServiceTime = 25 * time.Millisecond
	demoDuration    = 8 * time.Second
	demoHeavy       = 360
	demoLightRate   = 30
)

// overload drives one heavy tenant and four light ones through an HTTP server that embeds the
// filter with the live configuration of the cluster (the sample tenant-workloads level: one
// flow per tenant namespace, at most 300 waiting requests per flow), and prints each client's
// counts next to its fair share.
func overload(ctx context.Context, cluster *harness.Cluster) error {
	fs, err := harness.StartFilterServer(ctx, cluster.Config, harness.FilterOptions{
		ServerConcurrencyLimit: demoSeats, ServiceTime: demoServiceTime})
	if err != nil {
		return err
	}
	defer func() {
		if err := fs.Stop(); err != nil {
			fmt.Println("stopping the filter server:", err)
		}
	}()
	fmt.Printf("An API server on %s embeds the filter: %d seats, each GET takes %s.\n", fs.URL, demoSeats, demoServiceTime)
	fmt.Printf("tenant-red keeps %d requests in flight; tenant-blue, -green, -gold and -pink each send %d per second\n", demoHeavy, demoLightRate)
	fmt.Printf("(%.2f seats' worth), for %s.\n\n", demoLightRate*demoServiceTime.Seconds(), demoDuration)
	clients := []harness.Client{{Name: "tenant-red (heavy)", User: "tenant-red-ci", Namespace: "tenant-red-prod", Concurrency: demoHeavy}}
	for _, c := range []string{"blue", "green", "gold", "pink"} {
		clients = append(clients, harness.Client{Name: "tenant-" + c, User: "tenant-" + c + "-ci",
			Namespace: "tenant-" + c + "-prod", Rate: demoLightRate})
	}
	results := harness.RunOverload(ctx, fs.URL, clients, demoDuration)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return printResults(results)
}

func printResults(results []harness.ClientResult) error {
	total := 0
	for _, r := range results {
		total += r.Served
	}
	if total == 0 {
		return errors.New("no request was served")
	}
	// Max-min fair shares of the seats: each light tenant asks for rate x service time seats and
	// gets it; the heavy tenant gets the rest.
	lightSeats := demoLightRate * demoServiceTime.Seconds()
	fmt.Printf("%-20s %6s %7s %9s %7s %11s %8s  %s\n", "client", "sent", "served", "rejected", "share", "fair share", "p99", "FlowSchema")
	fmt.Println(strings.Repeat("-", 90))
	var problems []string
	for i, r := range results {
		fair := lightSeats / demoSeats
		if i == 0 {
			fair = (demoSeats - lightSeats*float64(len(results)-1)) / demoSeats
		}
		share := float64(r.Served) / float64(total)
		fmt.Printf("%-20s %6d %7d %9d %7.3f %11.3f %8s  %s\n", r.Name, r.Sent, r.Served, r.Rejected, share, fair,
			r.Percentile(0.99).Round(time.Millisecond), r.FlowSchema)
		if i > 0 && (r.Rejected > 0 || r.Served != r.Sent || share < fair-0.03) {
			problems = append(problems, fmt.Sprintf("%s: sent %d, served %d, rejected %d, share %.3f (fair %.3f)",
				r.Name, r.Sent, r.Served, r.Rejected, share, fair))
		}
	}
	if results[0].Rejected == 0 {
		problems = append(problems, "the heavy tenant was never rejected")
	}
	if len(problems) > 0 {
		return fmt.Errorf("fair queuing did not hold: %s", strings.Join(problems, "; "))
	}
	fmt.Println("\nEvery light tenant was served in full, with no 429s, at its fair share; the heavy tenant")
	fmt.Println("got the rest of the seats and its surplus was rejected with 429 and Retry-After.")
	return nil
}
