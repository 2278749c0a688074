// Package registry holds the table of registered backends, which the user's
// package (agentcli.Open) reads and the backend author's package
// (driver.Register) writes. The factories are stored as they were given;
// agentcli knows their type. It has no dependencies, so both packages can
// import it.
package registry

import (
	"slices"
	"sync"
)

var (
	mu        sync.RWMutex
	factories = map[string]any{}
)

// Register stores f under name. It panics if name is empty, f is nil, or
// name is already registered.
func Register(name string, f any) {
	mu.Lock()
	defer mu.Unlock()
	if name == "" || f == nil {
		panic("agentcli: Register with empty name or nil factory")
	}
	if _, dup := factories[name]; dup {
		panic("agentcli: Register called twice for backend " + name)
	}
	factories[name] = f
}

// Lookup returns the factory registered under name.
func Lookup(name string) (any, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Names returns the registered names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
