//go:build !unix

package runner

import "io/fs"

func executable(fi fs.FileInfo) bool { return fi.Mode().IsRegular() }
