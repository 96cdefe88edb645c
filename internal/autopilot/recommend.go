package autopilot

// DefaultConfig is the documented configuration (docs/autopilot.md).
func DefaultConfig() Config {
	panic("TODO(core)")
}

// Recommend sizes every level of the pool from one window: levels under pressure gain the
// shares that bring them to Config.TargetUtilisation, taken from slack levels without taking
// them below theirs; the pool's total shares do not change; per-level bounds and step limits
// hold. Levels missing from the window are held. It does not keep state: the loop adds
// confirmation and rollback.
func Recommend(cfg Config, levels []Level, w Window) map[string]Recommendation {
	panic("TODO(core)")
}
