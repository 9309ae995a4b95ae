package guard_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/internal/guard"
)

// childEnv makes the test binary a program that calls guard.Main (unless
// its value is "off"), reports what it sees on stdout and waits for stdin
// to close. attackEnv makes it the attacker: "getfd PID FD" takes the
// descriptor with pidfd_getfd and writes to it.
const (
	childEnv  = "GUARD_TEST_CHILD"
	attackEnv = "GUARD_TEST_ATTACK"
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(attackEnv) != "":
		os.Exit(attack(os.Args[len(os.Args)-2:]))
	case os.Getenv(childEnv) == "off":
		os.Exit(child())
	case os.Getenv(childEnv) != "":
		guard.Main(local.Secret)
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// attack takes fd of process pid with pidfd_getfd and writes to it.
func attack(args []string) int {
	pid, _ := strconv.Atoi(args[0])
	fd, _ := strconv.Atoi(args[1])
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_open:", err)
		return 1
	}
	got, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_getfd:", err)
		return 1
	}
	if _, err := unix.Write(got, []byte("forged\n")); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		return 1
	}
	return 0
}

// report is what the child saw after guard.Main.
type report struct {
	Status     string
	Undumpable bool
	Held       int
	Dumpable   int
	Token      string
	OSToken    string
	Environ    []string
	Pid        int
}

func child() int {
	st := guard.Current()
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	r := report{
		Status: fmt.Sprint(st.Err), Undumpable: st.Undumpable, Held: st.Held, Dumpable: d,
		Token: guard.Getenv("API_TOKEN"), OSToken: os.Getenv("API_TOKEN"),
		Environ: guard.Environ(), Pid: os.Getpid(),
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 1
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until stdin closes
	return 0
}

// started is a child and what it reported.
type started struct {
	cmd *exec.Cmd
	r   report
}

// startChild starts the test binary bin as the child, through prefix (a
// command that changes user) and a shell whose pipe, made by the child's
// user, is the child's stdout, as a client's pipe is dsh's; mode is
// childEnv's value.
func startChild(t *testing.T, bin string, prefix []string, mode string, env ...string) *started {
	t.Helper()
	args := append(slices.Clone(prefix), "sh", "-c", `"$0" -test.run='^$' | cat`, bin)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append([]string{childEnv + "=" + mode, "PATH=" + os.Getenv("PATH")}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	var r report
	if err := json.NewDecoder(out).Decode(&r); err != nil {
		t.Fatalf("the child reported nothing: %v", err)
	}
	return &started{cmd: cmd, r: r}
}

var secrets = []string{"API_TOKEN=tok-guard-4242", "OPENAI_API_KEY=sk-guard-openai-4242", "PLAIN=kept"}

func TestMainHoldsSecretsInMemoryOnly(t *testing.T) {
	c := startChild(t, os.Args[0], nil, "on", secrets...)
	if c.r.Status != "<nil>" || !c.r.Undumpable || c.r.Dumpable != 0 || c.r.Held != 2 {
		t.Errorf("status: %+v", c.r)
	}
	// The code that needs a credential still has it; the environment
	// does not.
	if c.r.Token != "tok-guard-4242" || c.r.OSToken != "" {
		t.Errorf("token: held %q, in the environment %q", c.r.Token, c.r.OSToken)
	}
	for _, kv := range secrets {
		if !slices.Contains(c.r.Environ, kv) {
			t.Errorf("Environ lacks %s: %q", kv, c.r.Environ)
		}
	}
	// Not in the process image either: /proc/PID/environ, which root
	// (this test, here) can read, shows the environment it was executed
	// with.
	env, err := os.ReadFile("/proc/" + strconv.Itoa(c.r.Pid) + "/environ")
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatal(err)
		}
		return // not readable: all the better
	}
	for _, s := range []string{"tok-guard-4242", "sk-guard-openai-4242"} {
		if strings.Contains(string(env), s) {
			t.Errorf("/proc/PID/environ still holds %s", s)
		}
	}
	if !strings.Contains(string(env), "PLAIN=kept") {
		t.Errorf("/proc/PID/environ lost PLAIN: %q", env)
	}
}

func TestMainWithoutSecretsDoesNotExecute(t *testing.T) {
	c := startChild(t, os.Args[0], nil, "on", "PLAIN=kept")
	if c.r.Status != "<nil>" || !c.r.Undumpable || c.r.Held != 0 {
		t.Errorf("status: %+v", c.r)
	}
}

// TestNonRootCannotReadIt is the attack: another process of the same
// (non-root) user reads the guarded process's environment and memory,
// lists its descriptors, writes into its stdout through /proc and takes
// its stdout with pidfd_getfd. Each must fail. The control, the same
// attacks on the same program unguarded, must succeed.
func TestNonRootCannotReadIt(t *testing.T) {
	prefix, bin := asNobody(t)
	for _, mode := range []string{"on", "off"} {
		c := startChild(t, bin, prefix, mode, secrets...)
		pid := strconv.Itoa(c.r.Pid)
		for _, a := range []struct{ name, cmd string }{
			{"environ", "grep -a tok-guard-4242 /proc/" + pid + "/environ"},
			{"mem", "addr=$(grep -m1 ' r' /proc/" + pid + "/maps | cut -d- -f1); dd if=/proc/" + pid + "/mem bs=16 count=1 skip=$((0x$addr)) iflag=skip_bytes status=none | wc -c | grep -qx 16"},
			{"fd", "ls /proc/" + pid + "/fd/ | grep -qx 1"},
			{"write to fd/1", "echo forged > /proc/" + pid + "/fd/1"},
			{"pidfd_getfd", attackEnv + "=1 " + bin + " getfd " + pid + " 1"},
		} {
			out, err := exec.Command(prefix[0], append(prefix[1:], "sh", "-c", a.cmd)...).CombinedOutput()
			if mode == "on" && err == nil {
				t.Errorf("%s: %s succeeded as nobody: %s", a.name, a.cmd, out)
			}
			if mode == "off" && err != nil {
				t.Errorf("control: %s failed on an unguarded process, so the attack proves nothing: %v %s", a.name, err, out)
			}
		}
	}
}

// asNobody is the command prefix that runs a program as nobody, and a
// copy of the test binary nobody can execute. Without root, or without
// setpriv, the test is skipped.
func asNobody(t *testing.T) (prefix []string, bin string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: switching to another user needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIP-REASON: no setpriv (util-linux) to run a process as another user")
	}
	dir, err := os.MkdirTemp("/var/tmp", "dsh-guard-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "guard.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"}, bin
}
