package dispatch

import "github.com/apf-operator/apf-operator/internal/apf/metrics"

// Outcome is how a request handed to Handle ended. Every request ends with exactly one.
type Outcome uint8

const (
	// Executed: the request was dispatched and exec ran.
	Executed Outcome = iota
	// RejectedQueueFull: the request arrived at a queue holding its queue length limit.
	RejectedQueueFull
	// RejectedTimeout: the request waited the wait limit without being dispatched.
	RejectedTimeout
	// RejectedCancelled: the request's context was cancelled while it waited.
	RejectedCancelled
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Executed:
		return "Executed"
	case RejectedQueueFull:
		return "RejectedQueueFull"
	case RejectedTimeout:
		return "RejectedTimeout"
	case RejectedCancelled:
		return "RejectedCancelled"
	}
	return "Outcome(unknown)"
}

// Reason returns the rejection reason as the metrics and HTTP responses name it: queue-full,
// timeout or cancelled; "" for Executed.
func (o Outcome) Reason() string {
	switch o {
	case RejectedQueueFull:
		return metrics.ReasonQueueFull
	case RejectedTimeout:
		return metrics.ReasonTimeout
	case RejectedCancelled:
		return metrics.ReasonCancelled
	}
	return ""
}

// Rejected reports whether the request was rejected.
func (o Outcome) Rejected() bool { return o != Executed }
