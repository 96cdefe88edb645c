package validation

// Bounds of the API fields. They repeat the OpenAPI bounds of the CRD (api/v1alpha1 markers) so
// that the offline validator rejects what the API server would reject.
const (
	// MaxPriorityLevel is the largest spec.priorityLevel.
	MaxPriorityLevel = 1_000_000_000
	// MaxMatchingPriority is the largest spec.matchingPriority.
	MaxMatchingPriority = 1_000_000_000
	// MaxAssuredConcurrencyShares is the largest spec.assuredConcurrencyShares.
	MaxAssuredConcurrencyShares = 100_000
	// MaxQueuesPerWidth is the largest spec.queuesPerWidth.
	MaxQueuesPerWidth = 4096
	// MaxQueueLengthLimit is the largest spec.queueLengthLimit.
	MaxQueueLengthLimit = 100_000
	// MaxLendablePercent is the largest spec.lendablePercent (kube-apiserver's limit).
	MaxLendablePercent = 100
	// MaxBorrowingLimitPercent is the largest spec.borrowingLimitPercent. kube-apiserver sets
	// no upper bound; this one keeps the CRD's schema finite.
	MaxBorrowingLimitPercent = 1_000_000
	// MaxConjunctions is the most conjunctions in spec.match.
	MaxConjunctions = 64
	// MaxAtomicTests is the most atomic tests in one conjunction.
	MaxAtomicTests = 32
	// MaxSetItems is the most values in the set of an atomic test.
	MaxSetItems = 256
	// MaxValueLength is the longest value (in characters) an atomic test compares with.
	MaxValueLength = 1024
	// MaxRegexLength is the longest pattern or transformation regex, in characters.
	MaxRegexLength = 512
	// MaxNameLength is the longest object name (a DNS subdomain).
	MaxNameLength = 253
)
