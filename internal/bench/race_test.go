//go:build race

package main

var testBuildFlags = []string{"-race"}
