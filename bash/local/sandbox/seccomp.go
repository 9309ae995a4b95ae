//go:build linux

package sandbox

// The seccomp filters: what namespaces and Landlock leave open.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedAlways are the system calls no sandboxed command gets (EPERM):
// io_uring, whose operations bypass seccomp and which has been a steady
// source of kernel exploits; the kernel keyring, which is not namespaced,
// so a command could read or plant keys of dsh's user; BPF, perf events
// and userfaultfd, kernel attack surface a shell command has no need for.
var deniedAlways = []string{"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd"}

// tiocsti is refused always: it pushes bytes into a terminal's input as
// if typed. A command has its own terminal's input anyway (docs/spec.md
// §2.7), but with it, where it can open another terminal of the user (the
// landlock backend below ABI 5 does not control device ioctls), it would
// type commands into the user's shell there.
var tiocsti = seccomp.NameWithConditions{Name: "ioctl", Conditions: lowIs(1, unix.TIOCSTI)}

// filterSpec says which sockets a filter refuses, for the landlock
// backend, which has no network namespace, no control of UDP and, below
// Landlock ABI 9, none of Unix sockets.
type filterSpec struct {
	denyIP bool // AF_INET, AF_INET6: network: false
	// tcpOnly refuses AF_INET and AF_INET6 sockets but TCP ones: with a
	// network map, Landlock's rules decide TCP connections only, so a
	// UDP, raw or MPTCP socket would reach anywhere.
	tcpOnly  bool
	denyUnix bool // AF_UNIX sockets (socketpair stays): no host socket is reachable
}

// policy is the seccomp policy of spec: default allow, EPERM for the
// denied calls.
func (spec filterSpec) policy() seccomp.Policy {
	group := seccomp.SyscallGroup{Names: deniedAlways, Action: seccomp.ActionErrno,
		NamesWithCondtions: []seccomp.NameWithConditions{tiocsti}}
	var refused [][]seccomp.Condition
	if spec.denyIP {
		refused = append(refused, lowIs(0, unix.AF_INET), lowIs(0, unix.AF_INET6))
	}
	if spec.tcpOnly {
		refused = append(refused, notTCP(unix.AF_INET)...)
		refused = append(refused, notTCP(unix.AF_INET6)...)
	}
	if spec.denyUnix {
		refused = append(refused, lowIs(0, unix.AF_UNIX))
	}
	for _, c := range refused {
		group.NamesWithCondtions = append(group.NamesWithCondtions, seccomp.NameWithConditions{Name: "socket", Conditions: c})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{group}}
}

// lowIs matches argument arg whose low 32 bits are v. socket's arguments
// are ints: the kernel reads the low half of each register, so a match
// on all 64 bits (seccomp.Equal) misses AF_INET with a bit set above.
// Bit tests of a value below 2^32 ignore the high half.
func lowIs(arg uint32, v uint32) []seccomp.Condition {
	c := []seccomp.Condition{{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)}}
	for b := uint32(1); b != 0; b <<= 1 {
		if v&b != 0 {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(b)})
		}
	}
	return c
}

// notTCP are the ways socket(family, type, protocol) is not TCP, each a
// list of conditions that must all hold. The type's low four bits (the
// others are SOCK_NONBLOCK and SOCK_CLOEXEC) are not SOCK_STREAM (1):
// one of bits 1-3 is set, or bit 0 is clear. The protocol is neither 0
// nor IPPROTO_TCP (6), which an MPTCP stream would pass Landlock with:
// a bit but 1 and 2 is set, or it is 2 or 4.
func notTCP(family uint32) [][]seccomp.Condition {
	cond := func(arg uint32, op seccomp.Operation, v uint64) []seccomp.Condition {
		return append(lowIs(0, family), seccomp.Condition{Argument: arg, Operation: op, Value: v})
	}
	return [][]seccomp.Condition{
		cond(1, seccomp.BitsSet, 0xe),
		cond(1, seccomp.BitsNotSet, 0x1),
		cond(2, seccomp.BitsSet, 0xffffffff&^0x6),
		append(lowIs(0, family), lowIs(2, 2)...),
		append(lowIs(0, family), lowIs(2, 4)...),
	}
}

// program assembles spec's filter as raw BPF, with a guard in front: a
// system call of another architecture than this process's (the 32-bit
// int 0x80 entry on amd64, which elastic's program lets through) fails
// with ENOSYS.
func (spec filterSpec) program() ([]bpf.RawInstruction, error) {
	p := spec.policy()
	insts, err := p.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(syscall.ENOSYS)},
	}
	raw, err := bpf.Assemble(append(guard, insts...))
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return raw, nil
}

// bytes is the filter as bwrap's --seccomp reads it: struct sock_filter
// entries in host order.
func (spec filterSpec) bytes() ([]byte, error) {
	raw, err := spec.program()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, in := range raw {
		_ = binary.Write(&b, binary.NativeEndian, unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K})
	}
	return b.Bytes(), nil
}

// loadThread installs raw on the calling OS thread only (no TSYNC): the
// landlock backend's thread, which then starts the shell. no_new_privs
// must be set first.
func loadThread(raw []bpf.RawInstruction) error {
	filter := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
