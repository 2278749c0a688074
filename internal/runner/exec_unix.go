//go:build unix

package runner

import "io/fs"

func executable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
