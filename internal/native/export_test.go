package native

// SetNameHash replaces the hash that ends a cut native name until the returned restore runs,
// so that tests can force a collision.
func SetNameHash(h func(string) string) (restore func()) {
	saved := nameHash
	nameHash = h
	return func() { nameHash = saved }
}
