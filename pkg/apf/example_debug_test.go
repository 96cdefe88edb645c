package apf_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// ExplainQueues adds where the request would queue: the shuffle-sharding hand of its flow
// among its level's queues (64 per width, hand of 6, here).
func ExampleFilter_ExplainQueues() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	e := f.ExplainQueues(apf.Attributes{User: "alice", Groups: []string{"tenants"}, Verb: "list",
		Resource: "pods", Namespace: "team-a", ResourceRequest: true})
	fmt.Println(e.FlowSchema, e.QueuesPerWidth, len(e.Hand))
	// Output:
	// tenant-workloads 64 6
}

// DumpPriorityLevels lists the levels with their limits and counts; the last line is the
// server's.
func ExampleFilter_DumpPriorityLevels() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	if err := f.DumpPriorityLevels(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// RequestPriority , PriorityLevel, Exempt, Draining, AssuredConcurrency, ExecutingWidth, WaitingRequests, ActiveQueues
	// system-top      , 0            , true  , false   , 0                 , 0             , 0              , 0
	// tenant-workloads, 5000         , false , false   , 100               , 0             , 0              , 0
	// (server)        ,              ,       ,         , 600               , 0             , 0              ,
}

// ServeWatch holds a watch's seat while exec runs: exec starts the watch, returns once its
// initial events are sent, and leaves the rest to another goroutine.
func ExampleFilter_ServeWatch() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	a := apf.Attributes{User: "bob", Groups: []string{"system:authenticated"}, Verb: "watch",
		Resource: "configmaps", Namespace: "default", ResourceRequest: true}
	done := make(chan struct{})
	err = f.ServeWatch(context.Background(), &a, func(c apf.Classification) {
		initialised := make(chan struct{})
		go func() {
			defer close(done)
			close(initialised) // the initial events are sent
			// ... stream the watch until it ends ...
		}()
		<-initialised
		fmt.Println("watch initialised at", c.RequestPriority, "long-running:", c.LongRunning)
	})
	<-done
	fmt.Println("error:", err)
	// Output:
	// watch initialised at workload-low long-running: false
	// error: <nil>
}

// DumpQueues lists the non-empty queues; with nothing waiting or executing, only the header.
func ExampleFilter_DumpQueues() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	if err := f.DumpQueues(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// RequestPriority, Width, Index, WaitingRequests, ExecutingRequests, VirtualStartSeconds, Draining
}

// SetClassificationHeaders names a classification in response headers, as Filter.Handler does,
// for a server that serves through Filter.Serve.
func ExampleFilter_SetClassificationHeaders() {
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600})
	if err != nil {
		panic(err)
	}
	f.Update(tenantObjects())
	c := f.Explain(apf.Attributes{User: "alice", Groups: []string{"tenants"}, Verb: "get",
		Resource: "pods", Namespace: "team-a", ResourceRequest: true})
	h := http.Header{}
	f.SetClassificationHeaders(h, &c)
	fmt.Println(h.Get(apf.HeaderFlowSchema), h.Get(apf.HeaderRequestPriority))
	// Output:
	// tenant-workloads tenant-workloads
}
