package sandbox

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// onFilteredThread runs fn on a thread that loaded spec's filter (and is
// then discarded), and waits for it.
func onFilteredThread(t *testing.T, spec filterSpec, fn func()) {
	t.Helper()
	raw, err := spec.program()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the filtered thread ends with the goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		if err := loadThread(raw); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// socketErrs runs socket(family, type, protocol) for each case under
// spec's filter: nil where a socket was made.
func socketErrs(t *testing.T, spec filterSpec, cases [][3]uint64) []error {
	t.Helper()
	out := make([]error, len(cases))
	onFilteredThread(t, spec, func() {
		for i, c := range cases {
			fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(c[0]), uintptr(c[1]), uintptr(c[2]))
			if errno != 0 {
				out[i] = errno
				continue
			}
			unix.Close(int(fd))
		}
	})
	return out
}

// TestFilterSockets: network: false refuses IP sockets, a network map
// with Landlock every IP socket but TCP; a family or protocol with bits
// set above the int the kernel reads is refused all the same.
func TestFilterSockets(t *testing.T) {
	const high = 1 << 32 // ignored by the kernel, which reads an int
	stream, dgram := uint64(unix.SOCK_STREAM), uint64(unix.SOCK_DGRAM)
	flags := uint64(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)
	for _, tc := range []struct {
		spec   filterSpec
		cases  [][3]uint64
		denied []bool
	}{
		{filterSpec{denyIP: true, denyUnix: true},
			[][3]uint64{{unix.AF_INET, stream, 0}, {high | unix.AF_INET, dgram, 0}, {high | unix.AF_INET6, stream, 0},
				{high | unix.AF_UNIX, stream, 0}, {unix.AF_NETLINK, unix.SOCK_RAW, 0}},
			[]bool{true, true, true, true, false}},
		{filterSpec{tcpOnly: true, denyUnix: true},
			[][3]uint64{{unix.AF_INET, stream, 0}, {unix.AF_INET6, stream | flags, unix.IPPROTO_TCP},
				{unix.AF_INET, dgram, 0}, {high | unix.AF_INET, dgram | flags, 0}, {unix.AF_INET6, dgram, unix.IPPROTO_UDP},
				{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, {unix.AF_INET, unix.SOCK_SEQPACKET, 0},
				{unix.AF_INET, stream, unix.IPPROTO_MPTCP}, {unix.AF_INET6, stream, high | unix.IPPROTO_MPTCP},
				{unix.AF_INET, stream, high}, {unix.AF_INET, stream, 2}, {unix.AF_INET, stream, 4},
				{unix.AF_UNIX, stream, 0}},
			[]bool{false, false, true, true, true, true, true, true, true, false, true, true, true}},
	} {
		for i, err := range socketErrs(t, tc.spec, tc.cases) {
			if tc.denied[i] && !errors.Is(err, unix.EPERM) || !tc.denied[i] && err != nil {
				t.Errorf("%+v: socket(%#x, %#x, %#x): %v, want denied %v", tc.spec, tc.cases[i][0], tc.cases[i][1], tc.cases[i][2], err, tc.denied[i])
			}
		}
	}
}

// TestFilterTIOCSTI: every filter refuses the ioctl that types into a
// terminal, whatever the bits above the int the kernel reads; other
// ioctls go through (to /dev/null, which is no terminal: ENOTTY).
func TestFilterTIOCSTI(t *testing.T) {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	const high = 1 << 32
	cmds := []uint64{unix.TIOCSTI, high | unix.TIOCSTI, unix.TIOCGWINSZ}
	for _, spec := range []filterSpec{{}, {denyIP: true, denyUnix: true}, {tcpOnly: true, denyUnix: true}} {
		errs := make([]error, len(cmds))
		onFilteredThread(t, spec, func() {
			var c byte = 'x'
			for i, cmd := range cmds {
				if _, _, errno := unix.RawSyscall(unix.SYS_IOCTL, uintptr(null), uintptr(cmd), uintptr(unsafe.Pointer(&c))); errno != 0 {
					errs[i] = errno
				}
			}
		})
		for i, want := range []error{unix.EPERM, unix.EPERM, unix.ENOTTY} {
			if !errors.Is(errs[i], want) {
				t.Errorf("%+v: ioctl(%#x): %v, want %v", spec, cmds[i], errs[i], want)
			}
		}
	}
}
