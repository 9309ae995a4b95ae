//go:build linux

package sandbox

// The starter: a tiny static program that runs inside the bwrap sandbox
// between bwrap and the shell, so that the shell's real wait status
// reaches dsh (docs/spec.md §11). bwrap reports a child's death by signal
// n as exit 128+n; the starter forks the shell, waits for it and writes
// the raw wait status (4 bytes, host order) to fd 5, which dsh reads once
// bwrap has exited. It is pid 1 of the sandbox's pid namespace (bwrap
// --as-pid-1, which saves bwrap's own init and a fork), so it reaps the
// orphans it inherits until the shell exits; when it exits, the kernel
// ends what is left in the namespace. It blocks every signal for itself
// (the kill sequence's SIGTERM reaches the whole group and must not end
// the starter before it reports) and gives the shell an empty signal
// mask.
//
// Fds: 4 is the starter itself (a sealed memfd that bwrap executes as
// /proc/self/fd/4), 5 the status pipe, 6 the seccomp program; the shell
// gets none of them. argv is "starter SHELL ARGS...": SHELL is executed
// with argv[1:] and the starter's environment. A failed fork or wait
// exits 127 without a report, a failed execve exits the shell's child
// 127, as bash does for a command it cannot run.
//
// It is machine code written out here, not a program built with the
// module: a library user's program cannot be re-executed as a helper, and
// a Go binary would cost a runtime start per command. Only amd64 has one;
// elsewhere the bwrap backend is not offered (auto picks landlock).

import (
	"encoding/binary"
	"runtime"
)

// The fds the starter knows; the launcher places its files there.
const (
	starterFD = 4
	statusFD  = 5
	seccompFD = 6
)

// starterCode is the amd64 machine code, from this listing (GNU as, Intel
// syntax; stack: [rsp] the blocked mask, [rsp+8] the shell's mask,
// [rsp+16] the wait status, [rsp+32] argc as the kernel left it).
var starterCode = []byte{
	0x48, 0x83, 0xec, 0x20, //                          sub  rsp, 32
	0x48, 0xc7, 0x04, 0x24, 0xff, 0xff, 0xff, 0xff, //  mov  qword [rsp], -1       all signals
	0x48, 0xc7, 0x44, 0x24, 0x08, 0, 0, 0, 0, //        mov  qword [rsp+8], 0      none
	0xb8, 0x0e, 0x00, 0x00, 0x00, //                    mov  eax, 14               rt_sigprocmask(SIG_BLOCK, [rsp], NULL, 8)
	0x31, 0xff, //                                      xor  edi, edi
	0x48, 0x89, 0xe6, //                                mov  rsi, rsp
	0x31, 0xd2, //                                      xor  edx, edx
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, //              mov  r10d, 8
	0x0f, 0x05, //                                      syscall
	0xb8, 0x39, 0x00, 0x00, 0x00, //                    mov  eax, 57               fork()
	0x0f, 0x05, //                                      syscall
	0x48, 0x85, 0xc0, //                                test rax, rax
	0x74, 0x58, //                                      jz   child
	0x78, 0x4a, //                                      js   fail
	0x49, 0x89, 0xc4, //                                mov  r12, rax              the shell's pid
	0xb8, 0x3d, 0x00, 0x00, 0x00, //             wait:  mov  eax, 61               wait4(-1, [rsp+16], 0, NULL)
	0x48, 0xc7, 0xc7, 0xff, 0xff, 0xff, 0xff, //        mov  rdi, -1               any child: orphans too
	0x48, 0x8d, 0x74, 0x24, 0x10, //                    lea  rsi, [rsp+16]
	0x31, 0xd2, //                                      xor  edx, edx
	0x45, 0x31, 0xd2, //                                xor  r10d, r10d
	0x0f, 0x05, //                                      syscall
	0x48, 0x83, 0xf8, 0xfc, //                          cmp  rax, -4               EINTR: again
	0x74, 0xe2, //                                      je   wait
	0x48, 0x85, 0xc0, //                                test rax, rax
	0x78, 0x24, //                                      js   fail
	0x4c, 0x39, 0xe0, //                                cmp  rax, r12              an orphan: reaped, wait on
	0x75, 0xd8, //                                      jne  wait
	0xb8, 0x01, 0x00, 0x00, 0x00, //                    mov  eax, 1                write(5, [rsp+16], 4)
	0xbf, 0x05, 0x00, 0x00, 0x00, //                    mov  edi, 5
	0x48, 0x8d, 0x74, 0x24, 0x10, //                    lea  rsi, [rsp+16]
	0xba, 0x04, 0x00, 0x00, 0x00, //                    mov  edx, 4
	0x0f, 0x05, //                                      syscall
	0xb8, 0x3c, 0x00, 0x00, 0x00, //                    mov  eax, 60               exit(0)
	0x31, 0xff, //                                      xor  edi, edi
	0x0f, 0x05, //                                      syscall
	0xb8, 0x3c, 0x00, 0x00, 0x00, //             fail:  mov  eax, 60               exit(127)
	0xbf, 0x7f, 0x00, 0x00, 0x00, //                    mov  edi, 127
	0x0f, 0x05, //                                      syscall
	0xb8, 0x03, 0x00, 0x00, 0x00, //            child:  mov  eax, 3                close(4)
	0xbf, 0x04, 0x00, 0x00, 0x00, //                    mov  edi, 4
	0x0f, 0x05, //                                      syscall
	0xb8, 0x03, 0x00, 0x00, 0x00, //                    mov  eax, 3                close(5)
	0xbf, 0x05, 0x00, 0x00, 0x00, //                    mov  edi, 5
	0x0f, 0x05, //                                      syscall
	0xb8, 0x03, 0x00, 0x00, 0x00, //                    mov  eax, 3                close(6)
	0xbf, 0x06, 0x00, 0x00, 0x00, //                    mov  edi, 6
	0x0f, 0x05, //                                      syscall
	0xb8, 0x0e, 0x00, 0x00, 0x00, //                    mov  eax, 14               rt_sigprocmask(SIG_SETMASK, [rsp+8], NULL, 8)
	0xbf, 0x02, 0x00, 0x00, 0x00, //                    mov  edi, 2
	0x48, 0x8d, 0x74, 0x24, 0x08, //                    lea  rsi, [rsp+8]
	0x31, 0xd2, //                                      xor  edx, edx
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, //              mov  r10d, 8
	0x0f, 0x05, //                                      syscall
	0x48, 0x8b, 0x4c, 0x24, 0x20, //                    mov  rcx, [rsp+32]         argc
	0x48, 0x8b, 0x7c, 0x24, 0x30, //                    mov  rdi, [rsp+48]         argv[1]
	0x48, 0x8d, 0x74, 0x24, 0x30, //                    lea  rsi, [rsp+48]         &argv[1]
	0x48, 0x8d, 0x54, 0xcc, 0x30, //                    lea  rdx, [rsp+rcx*8+48]   envp
	0xb8, 0x3b, 0x00, 0x00, 0x00, //                    mov  eax, 59               execve
	0x0f, 0x05, //                                      syscall
	0xb8, 0x3c, 0x00, 0x00, 0x00, //                    mov  eax, 60               exit(127)
	0xbf, 0x7f, 0x00, 0x00, 0x00, //                    mov  edi, 127
	0x0f, 0x05, //                                      syscall
}

// starterELF wraps the code in a minimal ELF64 executable: the header, one
// PT_LOAD program header mapping the file read-only and executable at
// loadAddr, and the code right after them. It returns nil where there is
// no starter for this architecture.
func starterELF() []byte {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	const (
		loadAddr  = 0x400000
		ehdrSize  = 64
		phdrSize  = 56
		emX86_64  = 62
		etExec    = 2
		ptLoad    = 1
		pfReadExe = 5
	)
	size := ehdrSize + phdrSize + len(starterCode)
	b := make([]byte, ehdrSize+phdrSize, size)
	le := binary.LittleEndian
	copy(b, "\x7fELF\x02\x01\x01") // 64-bit, little endian, version 1, System V ABI
	le.PutUint16(b[16:], etExec)
	le.PutUint16(b[18:], emX86_64)
	le.PutUint32(b[20:], 1)                          // e_version
	le.PutUint64(b[24:], loadAddr+ehdrSize+phdrSize) // e_entry
	le.PutUint64(b[32:], ehdrSize)                   // e_phoff
	le.PutUint16(b[52:], ehdrSize)                   // e_ehsize
	le.PutUint16(b[54:], phdrSize)                   // e_phentsize
	le.PutUint16(b[56:], 1)                          // e_phnum
	p := b[ehdrSize:]
	le.PutUint32(p[0:], ptLoad)
	le.PutUint32(p[4:], pfReadExe)
	le.PutUint64(p[16:], loadAddr)     // p_vaddr
	le.PutUint64(p[24:], loadAddr)     // p_paddr
	le.PutUint64(p[32:], uint64(size)) // p_filesz
	le.PutUint64(p[40:], uint64(size)) // p_memsz
	le.PutUint64(p[48:], 0x1000)       // p_align
	return append(b, starterCode...)
}
