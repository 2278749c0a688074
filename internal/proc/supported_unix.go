//go:build unix

package proc

// ErrUnsupportedPlatform is never returned on unix systems; see
// proc_nounix.go.
var ErrUnsupportedPlatform error
