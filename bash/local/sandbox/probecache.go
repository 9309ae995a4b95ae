//go:build linux

package sandbox

// The bwrap probe (a sandboxed `exit 7`, ~5 ms) runs at every start of
// dsh: each `dsh run`, each agent session's `dsh mcp`. Its answer is
// remembered once it passed, with the strongest flags, until anything it
// rests on changes: the boot, the bwrap binary, dsh's own binary, the
// shell, the user, dsh's own confinement (namespaces, capabilities,
// seccomp, AppArmor label), the kernel's user namespace settings, the
// mounts the config makes (bwrap's arguments for the probe). A command
// whose starter reported nothing forgets it. The file names only that
// key; it carries no flags, so the worst a planted or stale one can do
// is skip the probe: commands then fail with bwrap's own error instead
// of auto falling back to Landlock. A probe that failed is never
// remembered.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// selfConfinement are what of dsh's own process decides what bwrap may
// do: its user and mount namespaces, its capabilities, no_new_privs, its
// seccomp mode and its AppArmor label (a service started with
// RestrictNamespaces, a flatpak, a container).
func selfConfinement(b *strings.Builder) {
	for _, ns := range []string{"user", "mnt"} {
		link, _ := os.Readlink("/proc/self/ns/" + ns)
		fmt.Fprintf(b, "ns %s\n", link)
	}
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		for _, k := range []string{"NoNewPrivs:", "Seccomp:", "CapEff:", "CapBnd:"} {
			if strings.HasPrefix(line, k) {
				b.WriteString(line)
			}
		}
	}
	label, _ := os.ReadFile("/proc/self/attr/current")
	fmt.Fprintf(b, "label %s\n", bytes.TrimSpace(label))
}

// forgetProbe removes the remembered probe: a sandboxed command whose
// starter reported nothing may mean bwrap no longer works here (or only
// that the sandbox was killed), and the next start probes again.
func forgetProbe() {
	if file, ok := probeCacheFile(); ok {
		_ = os.Remove(file)
	}
}

// userNSSettings are the settings that decide whether bwrap may make the
// user namespace it needs (Debian's, the kernel's, AppArmor's).
var userNSSettings = []string{
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
}

// probeKey is what a passed probe of the bwrap at path, with shell and
// bwrap's arguments args, rests on, hashed; "" when any of it cannot be
// read (then the probe always runs).
func probeKey(path, shell, args string) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "boot %s uid %d gid %d\n", bytes.TrimSpace(boot), os.Geteuid(), os.Getegid())
	fmt.Fprintf(&b, "args %q\n", args)
	selfConfinement(&b)
	for _, p := range []string{path, "/proc/self/exe", shell} {
		fi, err := os.Stat(p)
		if err != nil {
			return ""
		}
		st := fi.Sys().(*syscall.Stat_t)
		fmt.Fprintf(&b, "%s %d %d %d %d.%d %d.%d\n", p, st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	}
	for _, p := range userNSSettings {
		data, _ := os.ReadFile(p) // absent: empty
		fmt.Fprintf(&b, "%s=%s\n", p, bytes.TrimSpace(data))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// probeCacheFile is where the key of the last passed probe is kept:
// dsh's directory in the user's cache directory.
func probeCacheFile() (string, bool) {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return "", false
	}
	return filepath.Join(dir, "dsh", "bwrap-probe"), true
}

// probePassed reports whether the probe passed before under key: the
// file holds it, and it and its directory are this user's alone.
func probePassed(key string) bool {
	file, ok := probeCacheFile()
	if !ok || key == "" {
		return false
	}
	for _, p := range []string{filepath.Dir(file), file} {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Perm()&0o022 != 0 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
			return false
		}
	}
	data, err := os.ReadFile(file)
	return err == nil && string(data) == key+"\n"
}

// rememberProbe keeps key as the last passed probe's; a failure to write
// it only means the next start probes again.
func rememberProbe(key string) {
	file, ok := probeCacheFile()
	if !ok || key == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".bwrap-probe-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(key + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
