//go:build linux

package sandbox

// What dsh doctor prints of the sandbox: one fact a line.

import (
	"os"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/config"
)

// Describe says what the sandbox does here, one fact a line, for dsh
// doctor: backend and version, mode, what stays writable (the workspace,
// each writable root, /tmp), the network, each allowed socket, what the
// backend does differently, then what is hidden: the hide entries that
// exist, dsh's own files, the run directories, the spill base and how
// many host sockets are covered. Where a session's workspace or a
// command's workdir changes the answer, it is the executor's cwd's.
func (s *Sandbox) Describe() []string {
	var lines []string
	if s.bwrap != nil {
		lines = append(lines, "backend: bwrap "+s.bwrap.version()+" ("+s.bwrap.path+")")
	} else {
		lines = append(lines, "backend: landlock, ABI "+strconv.Itoa(s.landlock.abi)+s.landlock.helperNote())
	}
	lines = append(lines, "mode: "+s.mode)
	lines = append(lines, s.writableLines()...)
	if s.netMap != nil {
		lines = append(lines, s.netLines()...)
	} else {
		lines = append(lines, "network: "+s.net.describe())
	}
	for _, sock := range s.sockets {
		line := "socket: " + sock + " (allowSockets)"
		if _, err := os.Lstat(sock); err != nil {
			line = "socket: " + sock + " (allowSockets; missing now)"
		}
		lines = append(lines, line)
	}
	if s.landlock != nil {
		lines = append(lines, s.landlock.limits(s)...)
	}
	if s.bwrap != nil && !s.bwrap.disableUserns {
		lines = append(lines, "this bwrap has no --disable-userns: commands can make user namespaces")
	}
	lines = append(lines, s.hiddenLines()...)
	return append(lines, s.notes...)
}

// writableLines are the writable directories, one a line: in read-only
// mode only the command's own /tmp.
func (s *Sandbox) writableLines() []string {
	whose := "the command's own"
	if s.mode == config.SandboxWorkspaceWrite {
		whose = "the session's own"
	}
	tmp := "writable: /tmp (" + whose + ")"
	if s.landlock != nil {
		tmp = "writable: $TMPDIR (" + whose + " directory)"
	}
	if s.mode != config.SandboxWorkspaceWrite {
		return []string{tmp}
	}
	ws, _ := s.workspace("")
	lines := []string{"writable: the session's workspace (its cwd; default " + ws + ")"}
	for _, r := range s.roots {
		lines = append(lines, "writable: "+r)
	}
	return append(lines, tmp)
}

// hiddenLines say what is hidden, as a command in the executor's cwd
// would find it now.
func (s *Sandbox) hiddenLines() []string {
	var lines []string
	for _, h := range s.hide[:len(s.hide)-len(s.dshHide)] {
		if _, err := os.Lstat(h); err == nil {
			lines = append(lines, "hidden: "+h)
		}
	}
	for _, h := range s.dshHide {
		if _, err := os.Lstat(h); err == nil {
			lines = append(lines, "hidden (dsh): "+h)
		}
	}
	ws, _ := s.workspace("")
	replaced := s.runDirs
	if s.bwrap != nil {
		replaced = s.replaced()
	}
	v := s.newView(Command{Dir: ws}, ws, replaced)
	if line := s.configLine(v); line != "" {
		lines = append(lines, line)
	}
	lines = append(lines, s.spillLine(v))
	how := " (empty)"
	if s.landlock != nil {
		how = " (unreadable)"
	}
	lines = append(lines, "hidden: "+strings.Join(s.runDirs, ", ")+how)
	if r := resolvTarget(s.runDirs); r != "" {
		lines = append(lines, "readable: "+r+" (where "+resolvConf+" leads)")
	}
	if s.bwrap != nil {
		out := replaced
		if v.spill.base != "" {
			out = append(out, v.spill.base)
		}
		n := len(s.coveredSockets(v, out))
		lines = append(lines, "host Unix sockets: "+strconv.Itoa(n)+" bound outside "+strings.Join(replaced, ", ")+" and allowSockets, covered (found again at each command's start)")
	}
	return lines
}

// configLine says whether dsh's config file's directory is hidden.
func (s *Sandbox) configLine(v view) string {
	const what = "the config file's directory"
	switch {
	case s.configDir == "":
		return ""
	case v.configDir != "":
		return "hidden (dsh): " + v.configDir + " (" + what + "; " + v.config + " reads, read-only)"
	}
	if h := s.hiddenWith(s.configDir, v); h != "" {
		return "hidden (dsh): " + s.configDir + " (" + what + ", with " + h + ")"
	}
	return "not hidden: " + s.configDir + " (" + what + ": too broad to be dsh's own, or it holds the workspace or a writable root)"
}

// hiddenWith is the directory out of sight that holds p, for a command
// shown v; "" when p is in sight.
func (s *Sandbox) hiddenWith(p string, v view) string {
	out := s.runDirs
	if s.bwrap != nil {
		out = s.replaced()
	}
	if v.spill.base != "" {
		out = append(out, v.spill.base)
	}
	if visible(p, out, v.shown()) {
		return ""
	}
	for _, o := range out {
		if within(p, o) {
			return o
		}
	}
	return ""
}

// spillLine says how other spill files are hidden.
func (s *Sandbox) spillLine(v view) string {
	const own = "a command sees only its session's spill files"
	switch {
	case v.spill.base != "":
		return "hidden (dsh): " + v.spill.base + " (the spill base, with other sessions' and dsh processes' spill files; " + own + ")"
	case v.spill.own != "":
		return "hidden (dsh): the " + strconv.Itoa(len(v.spill.others)+1) + " private spill directories in " + s.base +
			" (a writable root, or it holds the home directory: hidden one by one, one made later is not)"
	}
	h := s.hiddenWith(s.base, v)
	if h == s.base {
		return "hidden (dsh): " + s.base + " (the spill base, replaced; " + own + ")"
	}
	return "hidden (dsh): " + s.base + " (the spill base, with " + h + "; " + own + ")"
}
