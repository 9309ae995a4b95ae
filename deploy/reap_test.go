package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// orphanScript leaves an orphan (a process whose parent exits at once),
// waits for it to end, then up to 10 s for its zombie to be reaped by
// whoever is PID 1: "reaped" or "zombie" and the process table.
const orphanScript = `(exec sleep 0.2 >/dev/null 2>&1 &)
for _ in $(seq 100); do ps -eo stat=,comm= | grep -q '^[^Z][^ ]* *sleep$' || break; sleep 0.1; done
for _ in $(seq 100); do ps -eo stat= | grep -q '^Z' || { echo reaped; exit 0; }; sleep 0.1; done
echo zombie; ps -eo pid,ppid,stat,args`

// TestEntrypointReapsOrphans: the image's ENTRYPOINT is PID 1 of the
// container, and commands orphan processes all the time (`cmd &` in a
// subshell, daemons); their zombies go to PID 1. dsh reaps only its own
// children, so PID 1 must be an init that reaps the others: each zombie
// holds a pid, and the user's process count (RLIMIT_NPROC, the pod's pids
// limit) until the container ends. The ENTRYPOINT runs here as PID 1 of a
// pid namespace, the paths of the image mapped to this machine's.
func TestEntrypointReapsOrphans(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if runtime.GOOS != "linux" || os.Geteuid() != 0 || err != nil {
		t.Skip("SKIP-REASON: needs Linux, root and unshare(1) for a pid namespace")
	}
	var entry string
	for _, in := range dockerfile(t, "Dockerfile") {
		if in.cmd == "ENTRYPOINT" {
			entry = in.args
		}
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("ENTRYPOINT %q: want the exec form", entry)
	}
	dir := t.TempDir()
	dsh := filepath.Join(dir, "dsh")
	if out, err := exec.Command("go", "build", "-o", dsh, "../cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for i, a := range argv {
		switch {
		case a == "/usr/local/bin/dsh":
			argv[i] = dsh
		case strings.HasPrefix(a, "/"):
			p, err := exec.LookPath(filepath.Base(a))
			if err != nil {
				t.Fatalf("ENTRYPOINT runs %s, not installed here (.ci/run installs the image's init): %v", a, err)
			}
			argv[i] = p
		}
	}
	args := append([]string{"--pid", "--fork", "--mount-proc"}, argv...)
	args = append(args, "run", "--workdir", dir, "--", orphanScript)
	out, err := exec.Command(unshare, args...).CombinedOutput()
	if err != nil || string(out) != "reaped\n" {
		t.Errorf("ENTRYPOINT %q as PID 1: %v\n%s\nwant the orphan's zombie reaped (an init such as tini as PID 1)", entry, err, out)
	}
}
