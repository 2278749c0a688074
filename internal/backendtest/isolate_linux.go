package backendtest

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"unsafe"
)

// runInNamespace runs the test binary again, selecting tests with pattern,
// in a new user and network namespace, and returns its combined output. It
// returns errNoNamespace (and the reason as output) when the kernel refuses
// the namespaces.
func runInNamespace(t *testing.T, pattern string) (string, error) {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+pattern, "-test.count=1", "-test.v=true")
	cmd.Env = append(os.Environ(), envIsolated+"=1")
	cmd.SysProcAttr = IsolatedAttr()
	out, err := cmd.CombinedOutput()
	var pe *os.PathError
	if errors.As(err, &pe) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		return err.Error(), errNoNamespace
	}
	return string(out), err
}

// IsolatedAttr returns process attributes that start a command in a new
// user and network namespace, mapped to root inside, with no network
// interface up (not even loopback). Starting the command fails (EPERM)
// where unprivileged user namespaces are not allowed. The command dies
// with the test process.
func IsolatedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// loopbackUp sets the IFF_UP flag of "lo" (what `ip link set lo up` does).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: name[16], then the flags (short)
	copy(ifr[:], "lo")
	ioctl := func(req uintptr) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
			return e
		}
		return nil
	}
	if err := ioctl(syscall.SIOCGIFFLAGS); err != nil {
		return err
	}
	flags := binary.NativeEndian.Uint16(ifr[16:])
	if flags&syscall.IFF_UP != 0 {
		return nil
	}
	binary.NativeEndian.PutUint16(ifr[16:], flags|syscall.IFF_UP)
	return ioctl(syscall.SIOCSIFFLAGS)
}
