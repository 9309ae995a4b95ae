package guard

// The Linux half: not dumpable, and the credentials handed to the
// re-executed process on a sealed memfd.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// allSeals are the seals of the held memfd: nobody, not even the
// process, can change it once written.
const allSeals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE

// setUndumpable makes the process not dumpable, and checks it took.
func setUndumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_DUMPABLE: %w", err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		return fmt.Errorf("PR_GET_DUMPABLE: %d, %v", v, err)
	}
	return nil
}

// reexec executes /proc/self/exe with the same arguments and the kept
// environment, the removed variables on a sealed memfd named by fdEnv. It
// returns only on failure.
func reexec(keep, remove []string) error {
	fd, err := unix.MemfdCreate("dsh-held-env", unix.MFD_ALLOW_SEALING)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "dsh-held-env")
	defer f.Close()
	if err := writeHeld(f, remove); err != nil {
		return err
	}
	env := append(keep, fdEnv+"="+strconv.Itoa(fd))
	return syscall.Exec("/proc/self/exe", os.Args, env)
}

// writeHeld writes the variables, NUL-terminated, seals the file and
// rewinds it.
func writeHeld(f *os.File, vars []string) error {
	var b bytes.Buffer
	for _, kv := range vars {
		b.WriteString(kv)
		b.WriteByte(0)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		return err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, allSeals); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// readHeld reads and closes the memfd the first process passed. A
// descriptor that is not such a memfd (the variable came from elsewhere)
// is left alone.
func readHeld(s string) ([]string, error) {
	fd, err := strconv.Atoi(s)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not a descriptor", fdEnv, s)
	}
	if seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0); err != nil || seals != allSeals {
		return nil, fmt.Errorf("%s=%d: not the held environment", fdEnv, fd)
	}
	f := os.NewFile(uintptr(fd), "dsh-held-env")
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading the held environment: %w", err)
	}
	var vars []string
	for kv := range strings.SplitSeq(string(data), "\x00") {
		if strings.Contains(kv, "=") {
			vars = append(vars, kv)
		}
	}
	return vars, nil
}
