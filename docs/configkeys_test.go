package docs

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// TestConfigKeysDocumented: every key of config.File is documented in
// docs/config.md, and every key docs/config.md documents is one of
// config.File.
func TestConfigKeysDocumented(t *testing.T) {
	keys, leaves := fileKeys()
	documented := documentedKeys(t)
	if len(documented) < 50 {
		t.Fatalf("docs/config.md documents only %d keys: did its tables change shape?", len(documented))
	}
	for _, k := range leaves {
		if !documented[k] {
			t.Errorf("config.File's key %s is not in docs/config.md", k)
		}
	}
	for k := range documented {
		if !slices.Contains(keys, k) {
			t.Errorf("docs/config.md documents %s, which config.File does not have", k)
		}
	}
}

// fileKeys lists the keys of a config file, from config.File's yaml tags:
// keys are every path ("local", "local.sandbox", "local.sandbox.mode"),
// leaves the paths of values that are not sections. A list of sections
// adds no step to the path ("hooks.PreToolUse.matcher"); a map is a leaf,
// as its keys are the user's (local.env.set).
func fileKeys() (keys, leaves []string) {
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := prefix + name
			keys = append(keys, key)
			if s := sectionType(f.Type); s != nil {
				walk(key+".", s)
			} else {
				leaves = append(leaves, key)
			}
		}
	}
	walk("", reflect.TypeFor[config.File]())
	return keys, leaves
}

// sectionType is the struct type a field of type t holds, directly, through a
// pointer or as a list; nil for a value.
func sectionType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

var (
	// mdHeading is a heading of docs/config.md; its keys are the code
	// spans before " — " ("## `local` — the local executor", "##
	// `hooks`, `claudeHooks`, `trustProjectHooks` — hook commands").
	mdHeading = regexp.MustCompile("^#{2,3} (.*)")
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	// index is a list index of a documented key ("hooks.EVENT[i]").
	index = regexp.MustCompile(`\[[a-z]\]`)
)

// documentedKeys reads the keys docs/config.md documents: those its
// headings name, and those of the first column of its key tables, which
// are relative to their section's first key unless they start with one
// of its keys ("hooks.EVENT[i].matcher", "claudeHooks"). A key written
// "…command" continues the one above it: it replaces that key's last step.
// EVENT stands for each event of config.Hooks, and list indexes are
// dropped, as fileKeys does.
func documentedKeys(t *testing.T) map[string]bool {
	data, err := os.ReadFile("config.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var heads []string // the keys of the section the line is in
	last := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := mdHeading.FindStringSubmatch(line); m != nil {
			before, _, _ := strings.Cut(m[1], " — ")
			heads = nil
			for _, c := range codeSpan.FindAllStringSubmatch(before, -1) {
				heads = append(heads, c[1])
				out[c[1]] = true
			}
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		if len(heads) == 0 {
			t.Errorf("config.md:%d: a key table in a section whose heading names no key", i+1)
			continue
		}
		for _, c := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			key := c[1]
			switch {
			case strings.HasPrefix(key, "…"):
				cut := strings.LastIndex(last, ".")
				key = last[:cut+1] + strings.TrimPrefix(key, "…")
			case !startsWithOne(key, heads):
				key = heads[0] + "." + key
			}
			last = key
			for _, k := range expandEvents(index.ReplaceAllString(key, "")) {
				out[k] = true
			}
		}
	}
	return out
}

// startsWithOne reports whether key is one of heads or below one.
func startsWithOne(key string, heads []string) bool {
	for _, h := range heads {
		if key == h || strings.HasPrefix(key, h+".") {
			return true
		}
	}
	return false
}

// expandEvents is key with EVENT replaced by each hook event.
func expandEvents(key string) []string {
	if !strings.Contains(key, ".EVENT.") {
		return []string{key}
	}
	var out []string
	for _, ev := range (&config.Hooks{}).Events() {
		out = append(out, strings.Replace(key, ".EVENT.", "."+ev.Name+".", 1))
	}
	return out
}
