package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

// healthScript runs, in a network namespace of its own, the image's
// HEALTHCHECK ("$@") before dsh serve starts, until it passes while dsh
// serves (CMD's argv, $CMD, one argument a line), and once dsh has
// stopped: one word each time.
const healthScript = `
set -u
ip link set lo up
"$@" && echo healthy || echo unhealthy
mapfile -t cmd <<<"$CMD"
"$DSH" "${cmd[@]}" 2>/dev/null & pid=$!
ok=unhealthy
for _ in $(seq "$TRIES"); do "$@" && { ok=healthy; break; }; sleep 0.1; done
echo "$ok"
kill -TERM "$pid"; wait "$pid"
"$@" && echo healthy || echo unhealthy
`

// TestHealthcheck: the Dockerfile's HEALTHCHECK, with the image's own
// programs (bash; no curl), fails while nothing serves, passes once dsh
// serve (the image's CMD) answers /healthz, and fails again after it
// stops. The pid namespace's end proves dsh gone.
func TestHealthcheck(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: needs root for a network namespace")
	}
	ins := dockerfile(t, "Dockerfile")
	probe := healthcheck(t, ins)
	var cmd []string
	for _, in := range ins {
		if in.cmd == "CMD" {
			if err := json.Unmarshal([]byte(in.args), &cmd); err != nil {
				t.Fatalf("CMD %s: %v", in.args, err)
			}
		}
	}
	dir := t.TempDir()
	for i := range cmd {
		if i > 0 && cmd[i-1] == "--workdir" {
			cmd[i] = dir // the image's /work
		}
	}
	dsh := filepath.Join(dir, "dsh")
	if out, err := exec.Command("go", "build", "-o", dsh, "../cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tries := int(proctest.Scale(30*time.Second) / (100 * time.Millisecond))
	c := exec.Command("unshare", append([]string{"--net", "--pid", "--fork", "--kill-child", "bash", "-c", healthScript, "health"}, probe...)...)
	c.Env = append(os.Environ(), "DSH="+dsh, "CMD="+strings.Join(cmd, "\n"), fmt.Sprintf("TRIES=%d", tries), "DSH_TOKEN=0123456789abcdef0123456789abcdef")
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil || string(out) != "unhealthy\nhealthy\nunhealthy\n" {
		t.Errorf("HEALTHCHECK %q before, while and after dsh serve %q: %v\n%s\nwant unhealthy, healthy, unhealthy; stderr:\n%s", probe, cmd, err, out, stderr.String())
	}
}
