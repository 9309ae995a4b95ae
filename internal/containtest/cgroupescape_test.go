package containtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
)

// The root containment escape (issue 15, item 7): a command with the
// right to write another cgroup's cgroup.procs (root, here) moves itself
// into the root cgroup or into dsh's own, out of its command's cgroup,
// and must still not outlive the command.

// cgroup2 is the cgroup v2 mount and this process's cgroup in it, and
// whether the hierarchy is mounted with nsdelegate (then the kernel
// refuses the move out of a command's cgroup namespace).
func cgroup2(t *testing.T) (mount, own string, nsdelegate bool) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	rel := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) >= 5 && len(tail) >= 3 && tail[0] == "cgroup2" && fields[3] == "/" {
			return fields[4], filepath.Join(fields[4], rel), strings.Contains(","+tail[2]+",", ",nsdelegate,")
		}
	}
	t.Skip("SKIP-REASON: no cgroup2 mount of the whole hierarchy")
	return "", "", false
}

// cgroupOf is pid's cgroup v2 path as this process sees it.
func cgroupOf(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	return ""
}

// movedInto checks that pid is in the cgroup rel (as this process sees
// it), or, where the kernel refuses the move, that it is not.
func movedInto(rel string, refused bool) check {
	return func(pid, _ int) error {
		got := cgroupOf(pid)
		if refused == (got == rel) {
			return fmt.Errorf("pid %d is in cgroup %q (target %q, refused %v)", pid, got, rel, refused)
		}
		return nil
	}
}

func TestCgroupEscapesDieThroughTheRegistry(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: moving into the root cgroup, or dsh's, needs root's right to write its cgroup.procs")
	}
	mount, own, nsdelegate := cgroup2(t)
	s := stackFor(t, config.ContainCgroup)
	for _, target := range []struct{ name, dir string }{{"root", mount}, {"dsh", own}} {
		rel := "/" + strings.TrimPrefix(strings.TrimPrefix(target.dir, mount), "/")
		// The escapee moves itself, then writes its pid, then becomes
		// the sleep: the move is done once the pid file is there.
		move := func(f string) string {
			return "sh -c 'echo $$ > " + target.dir + "/cgroup.procs; echo $$ > \"$0\"; exec sleep 300' " + q(f)
		}
		escapes := []escape{
			{name: "to-" + target.name, start: func(f string) string { return "setsid " + move(f) + " &" },
				escaped: all(isSleep, leftGroup, movedInto(rel, nsdelegate))},
			// Nothing left for the marker either: no environment, no
			// parent in the command, no group.
			{name: "to-" + target.name + "-env-cleared-orphan", start: func(f string) string { return "( env -i setsid " + move(f) + " & ) &" },
				escaped: all(isSleep, leftGroup, orphaned, noMarker, movedInto(rel, nsdelegate))},
		}
		for _, e := range escapes {
			for _, sc := range []scenario{scenarios[0], scenarios[2]} { // foreground, task-kill
				t.Run(e.name+"/"+sc.name, func(t *testing.T) {
					f := newFiles(t)
					sess := session.New(t.Name(), f.dir)
					t.Cleanup(sess.End)
					t.Cleanup(func() { killLeft(f.pid) })
					sc.run(t, s, sess, e, f)
					pid := proctest.ReadPid(t, f.pid)
					if len(proctest.Survivors(proctest.Wait, pid)) > 0 {
						t.Fatalf("the escapee outlived the command: %s", describe(pid))
					}
				})
			}
		}
	}
}
