// Package ptytest gives tests a pseudo-terminal to run a program on, and a
// minimal terminal at its other end: it records what the program draws
// (raw, and as text without escape sequences), answers the queries a
// full-screen program sends at start-up (cursor position, device
// attributes, colours), and types keys.
//
// It opens /dev/ptmx directly (Linux only; the package is empty
// elsewhere) and needs no dependency beyond golang.org/x/sys/unix.
package ptytest
