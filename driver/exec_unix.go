//go:build unix

package driver

import "io/fs"

func executable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
