//go:build !unix

package driver

import "io/fs"

func executable(fi fs.FileInfo) bool { return fi.Mode().IsRegular() }
