package ssh

// The remote side of a command: the command line sshd runs, the wrapper
// that starts the command and its watchdog, and the frames they exchange
// with dsh (docs/spec.md §13).

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// prelude is the POSIX sh the command line starts: it checks that bash and
// setsid are there (saying which is missing in a frame dsh can read) and
// hands the wrapper, its first argument, to bash. The user's login shell
// runs the command line, so it is the only part every shell must parse:
// one `exec /bin/sh -c '…'` with POSIX quoting.
const prelude = `w=$1; shift
for p in bash setsid; do
  command -v "$p" >/dev/null 2>&1 || { printf '\n%s missing %s\n' "$1" "$p"; exit 127; }
done
exec bash --noprofile --norc -c "$w" dsh-ssh "$@"`

// wrapper is the bash that turns sshd's session child into the command.
// Its arguments: the frame nonce, the heartbeat interval in seconds, the
// grace in milliseconds, the working directory ("" for the login
// directory), the payload mode ("s": the script comes on stdin, "i":
// stdin bytes come on stdin, "-": neither), NAME=VALUE assignments, "--"
// and the command.
//
// It changes to the working directory (or reports in a frame why it
// cannot), reads the payloads (each ends with a NUL), starts the watchdog
// in a session of its own with the channel's stdin, reports its own pid
// (which is the command's process group: sshd's session child leads a new
// session) in the start frame, and execs the command's bash with stdin
// /dev/null or the payload. The watchdog holds the channel's stderr on fd
// 7, writing nothing to it, so that sshd ends the channel only once the
// watchdog is done: a command is over when what it left in its group is
// gone too. Being sshd's child, the command's bash has its
// wait status reported by sshd itself, as exit-status or exit-signal.
//
// The watchdog gets the command's environment too (a process left behind
// is found by its variables, as the local executor's are), with setsid
// and bash named by path, so that a PATH of the command's cannot hide
// them. The wrapper's own variables start with __dsh_ so that they cannot
// be confused with variables of the environment, which the command
// inherits as they are.
const wrapper = `__dsh_n=$1 __dsh_ka=$2 __dsh_gms=$3 __dsh_wd=$4 __dsh_mode=$5; shift 5
__dsh_frame() { printf '\n%s %s\n' "$__dsh_n" "$*"; }
__dsh_vars=()
while [[ $1 != -- ]]; do __dsh_vars+=("$1"); shift; done
__dsh_cmd=$2
if [[ -n $__dsh_wd ]] && ! CDPATH= cd -- "$__dsh_wd" 2>/dev/null; then
  if [[ ! -e $__dsh_wd ]]; then __dsh_frame workdir missing
  elif [[ ! -d $__dsh_wd ]]; then __dsh_frame workdir notdir
  else __dsh_e=$( (CDPATH= cd -- "$__dsh_wd") 2>&1 ); __dsh_frame workdir unusable "${__dsh_e##*: }"
  fi
  exit 1
fi
exec 9<&0
if [[ $__dsh_mode == *s* ]] && ! IFS= read -r -d '' __dsh_script; then __dsh_frame payload; exit 1; fi
if [[ $__dsh_mode == *i* ]] && ! IFS= read -r -d '' __dsh_in; then __dsh_frame payload; exit 1; fi
hash setsid && __dsh_setsid=${BASH_CMDS[setsid]}
for __dsh_v in "${__dsh_vars[@]}"; do export "$__dsh_v"; done
( exec "$__dsh_setsid" "$BASH" --noprofile --norc -c "$__dsh_watch" dsh-ssh-watch "$$" "$__dsh_ka" "$__dsh_gms" <&9 7>&2 >/dev/null 2>&1 9<&- & )
__dsh_frame started "$$"
if [[ $__dsh_mode == *s* ]]; then
  __dsh_cmd='eval "$(< /dev/fd/3)" 3<&-'
  exec 3< <(printf %s "$__dsh_script" </dev/null 9<&-)
fi
if [[ $__dsh_mode == *i* ]]; then exec 0< <(printf %b "$__dsh_in" </dev/null 9<&-); else exec 0</dev/null; fi
exec -a bash "$BASH" --noprofile --norc -c "$__dsh_cmd" 9<&-`

// watchdog is the bash that kills the command's process group (its first
// argument) with TERM, then KILL after the grace (its third, in ms), when
// dsh says so (a line "k"), when 3 heartbeats (lines, one every second
// argument seconds) are missed, and when its stdin ends: sshd closes it
// when the command exits (so the command's leftovers in its group die
// with it) and when the connection goes. It runs in a session of its own,
// so a command's `kill 0` cannot reach it and the group is empty exactly
// when the command's processes are gone; it then stops at once. A member
// that is a zombie counts as gone (where /proc shows the members' states):
// an orphan's zombie waits for init, which may reap it late. Its pause
// between looks is a read on a pipe that never gets data: a shell can wait
// for the end of its own children only. It holds the channel's stderr on
// fd 7 until it ends (see wrapper).
const watchdog = `LC_ALL=C; __p=$1 __ka=$2 __gms=$3
__live() {
  kill -0 -- "-$__p" 2>/dev/null || return 1
  [[ -r /proc/self/stat ]] || return 0
  local f s
  for f in /proc/[0-9]*/stat; do
    { read -r s < "$f"; } 2>/dev/null || continue
    set -- ${s##*) }
    [[ $3 == "$__p" && $1 != [ZX] ]] && return 0
  done
  return 1
}
__end() {
  kill -TERM -- "-$__p" 2>/dev/null || exit 0
  exec 8<> <(:)
  if [[ -n $EPOCHREALTIME ]]; then
    __t=${EPOCHREALTIME//[!0-9]/}; __stop=$(( __t + __gms * 1000 ))
    while __live; do
      __t=${EPOCHREALTIME//[!0-9]/}; (( __t < __stop )) || break
      read -r -t 0.01 -u 8 _
    done
  else
    for (( __i = 0; __i < __gms; __i += 10 )); do
      __live || break
      read -r -t 0.01 -u 8 _
    done
  fi
  __live && kill -KILL -- "-$__p" 2>/dev/null
  exit 0
}
__m=0
while :; do
  if IFS= read -r -t "$__ka" __l; then
    [[ $__l == k ]] && __end
    __m=0
  elif (( $? > 128 )); then
    (( ++__m < 3 )) || __end
  else
    __end
  fi
done`

// Frames dsh writes on the command's stdin, after the payloads: a
// heartbeat every keepaliveMs, and the kill request.
var (
	frameHeartbeat = []byte("h\n")
	frameKill      = []byte("k\n")
)

// Payload modes of the wrapper.
const (
	modeScript = "s"
	modeStdin  = "i"
	modeNone   = "-"
)

// maxArgCommand is the longest command passed on the command line; a
// longer one (agents write files with large heredocs) comes on stdin, since
// Linux refuses a single argument of 128 KiB (as for the local executor).
const maxArgCommand = 64 << 10

// maxArgLine is the longest command line of an exec request. sshd hands
// it whole to the login shell as the one argument after -c, and Linux
// refuses a single argument of 128 KiB or more (MAX_ARG_STRLEN, its NUL
// included). Quoting makes a command longer (each ' is 4 bytes), so a
// command under maxArgCommand whose line would be over this one comes on
// stdin as well.
const maxArgLine = 128<<10 - 1

// invocation is one command's remote side: the command line for sshd's
// exec request, and what dsh writes on stdin before the frames.
type invocation struct {
	line    string
	payload []byte
	nonce   string
}

// invocationFor builds the remote side of a command. env holds the
// NAME=VALUE assignments in the order they apply (a later one wins). The
// command comes on the command line when it and the line are short
// enough, else on stdin.
func invocationFor(nonce, command, workdir string, stdin []byte, env []string, keepalive, grace time.Duration) invocation {
	if len(command) <= maxArgCommand {
		inv := invocationWith(nonce, command, true, workdir, stdin, env, keepalive, grace)
		if len(inv.line) <= maxArgLine {
			return inv
		}
	}
	return invocationWith(nonce, command, false, workdir, stdin, env, keepalive, grace)
}

// invocationWith builds the remote side of a command, which comes on the
// command line when inline is set, else on stdin.
func invocationWith(nonce, command string, inline bool, workdir string, stdin []byte, env []string, keepalive, grace time.Duration) invocation {
	mode := ""
	var payload []byte
	if !inline {
		mode += modeScript
		payload = append(append(payload, command...), 0)
		command = ""
	}
	if stdin != nil {
		mode += modeStdin
		payload = append(append(payload, escapeForPrintf(stdin)...), 0)
	}
	if mode == "" {
		mode = modeNone
	}
	args := []string{
		wrapperText, nonce, seconds(keepalive), strconv.FormatInt(grace.Milliseconds(), 10), workdir, mode,
	}
	args = append(args, env...)
	args = append(args, "--", command)
	var b strings.Builder
	b.WriteString("exec /bin/sh -c ")
	b.WriteString(shellQuote(prelude))
	b.WriteString(" dsh-ssh")
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return invocation{line: b.String(), payload: payload, nonce: nonce}
}

// wrapperText is the wrapper with the watchdog's text in a variable of
// its own (the watchdog runs as a new bash, which inherits no functions).
var wrapperText = "__dsh_watch=" + shellQuote(watchdog) + "\n" + wrapper

// seconds formats d for bash's read -t, which takes a fraction.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// shellQuote quotes s for a POSIX shell: in single quotes, each single
// quote written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// escapeForPrintf escapes b for bash's printf %b: each backslash doubled
// and each NUL written \0000, so that the payload holds no NUL (the
// wrapper's read ends at one) and printf writes b back byte for byte.
func escapeForPrintf(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/16)
	for _, c := range b {
		switch c {
		case '\\':
			out = append(out, '\\', '\\')
		case 0:
			out = append(out, `\0000`...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// frame is what the wrapper reported before the command's output.
type frame struct {
	// pgid is the command's process group, once it started.
	pgid int
	// problem is why it did not start: "workdir missing", "workdir
	// notdir", "workdir unusable <reason>", "missing bash", "payload".
	problem string
}

// maxPreamble bounds what may come before the start frame on stdout: the
// output of the remote user's rc files, which the login shell runs first.
const maxPreamble = 64 << 10

var errNoFrame = errors.New("no start frame")

// startFrame finds the wrapper's frame in the first bytes of stdout. It
// returns the frame and the bytes after its line (the command's first
// output), or ok false while buf may still grow into a frame; errNoFrame
// once buf is too long to hold one.
func startFrame(buf []byte, nonce string) (f frame, rest []byte, ok bool, err error) {
	key := []byte("\n" + nonce + " ")
	i := bytes.Index(buf, key)
	if i < 0 {
		if len(buf) > maxPreamble+len(key) {
			return frame{}, nil, false, errNoFrame
		}
		return frame{}, nil, false, nil
	}
	line := buf[i+len(key):]
	end := bytes.IndexByte(line, '\n')
	if end < 0 {
		if len(line) > 4096 {
			return frame{}, nil, false, errNoFrame
		}
		return frame{}, nil, false, nil
	}
	body := string(line[:end])
	rest = line[end+1:]
	if pg, found := strings.CutPrefix(body, "started "); found {
		n, convErr := strconv.Atoi(pg)
		if convErr != nil || n <= 1 {
			return frame{}, nil, false, fmt.Errorf("malformed start frame %q", body)
		}
		return frame{pgid: n}, rest, true, nil
	}
	return frame{problem: body}, rest, true, nil
}
