//go:build !linux

package conformance

// maybeHost does nothing: TestHostDies is Linux only (elsewhere a CLI
// outlives a host that dies; see README, When the host dies).
func maybeHost() {}
