//go:build !linux

package main

// guardSupported reports whether CLIs can be started through guardExec:
// not here (no parent-death signal); a CLI may outlive a gateway killed
// with SIGKILL.
const guardSupported = false

func guardExec() {}

// sweep finds nothing: there is no /proc to read the environments from.
func sweep(tag string) int { return 0 }
