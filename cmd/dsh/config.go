package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// The tool plugins a config file can name in `tools`.
const (
	toolBash  = "bash"
	toolTasks = "tasks"
)

// executorLocal is the only executor there is.
const executorLocal = "local"

// configFile is the dsh config file (see the package documentation for the
// layout). Its zero value is the default configuration, except Tools, which
// loadConfig fills in.
type configFile struct {
	// Executor names the executor to load: "local" (the only one).
	Executor string
	// Local is the local executor's section (SPEC.md §2.1), decoded by
	// config.DecodeLocal.
	Local config.Local
	// Tools lists the tool plugins to load, "bash" and "tasks", in the order
	// given. Absent means both; an empty list loads none.
	Tools []string
	// Bash is the bash tool's section.
	Bash bashtool.Config
	// Tasks is the task runtime's and the task tools' section.
	Tasks tasksSection
}

// tasksSection is the `tasks` key: the runtime's running limit and the task
// tools' waits.
type tasksSection struct {
	// MaxRunningPerSession caps the live background tasks of one session
	// (default 64).
	MaxRunningPerSession int
	// Tools holds waitTimeoutMs and maxWaitTimeoutMs.
	Tools tasktool.Config
}

// has reports whether the config loads the named tool plugin.
func (c configFile) has(name string) bool { return slices.Contains(c.Tools, name) }

// runtime is the task runtime's config.
func (c configFile) runtime() tasks.Config {
	return tasks.Config{MaxRunningPerSession: c.Tasks.MaxRunningPerSession}
}

// defaultConfig is the configuration without a file.
func defaultConfig() configFile {
	return configFile{Executor: executorLocal, Tools: []string{toolBash, toolTasks}}
}

// loadConfig reads the config file at path; "" means no file (the
// defaults). The error is one line that names the file.
func loadConfig(path string) (configFile, error) {
	if path == "" {
		return defaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return configFile{}, fmt.Errorf("config file %s: %w", path, pe.Err)
		}
		return configFile{}, fmt.Errorf("config file %s: %w", path, err)
	}
	c, err := parseConfig(data)
	if err != nil {
		return configFile{}, fmt.Errorf("config file %s: %w", path, err)
	}
	return c, nil
}

// parseConfig decodes a config file strictly: an unknown or duplicate key,
// a value of the wrong type and a number that is not positive are refused
// by name. The sections' own validation errors come through as they are
// ("bash-local: graceMs must be a positive finite number").
func parseConfig(data []byte) (configFile, error) {
	c := defaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		return configFile{}, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return configFile{}, err
	default:
		return configFile{}, fmt.Errorf("config must be a single YAML document (second one at line %d)", next.Line)
	}
	n := &doc
	if len(n.Content) == 0 {
		return c, nil
	}
	n = follow(n.Content[0])
	if isNull(n) {
		return c, nil
	}
	if n.Kind != yaml.MappingNode {
		return configFile{}, fmt.Errorf("config must be a mapping (line %d)", n.Line)
	}
	var bgLine int // line of an explicit bash.enableRunInBackground
	err := eachKey(n, "", func(key string, k, v *yaml.Node) error {
		switch key {
		case "executor":
			return decodeExecutor(&c.Executor, v)
		case "local":
			l, err := config.DecodeLocal(v)
			c.Local = l
			return err
		case "tools":
			return decodeTools(&c.Tools, v)
		case "bash":
			return decodeBash(&c.Bash, &bgLine, v)
		case "tasks":
			return decodeTasks(&c.Tasks, v)
		}
		return fmt.Errorf("unknown key %q (line %d)", key, k.Line)
	})
	if err != nil {
		return configFile{}, err
	}
	if err := c.Tasks.Tools.Validate(); err != nil {
		return configFile{}, err
	}
	if !c.has(toolTasks) {
		// Background runs need the task tools: without them the model
		// could start a task it can neither read nor stop.
		if c.Bash.EnableRunInBackground != nil && *c.Bash.EnableRunInBackground && c.has(toolBash) {
			return configFile{}, fmt.Errorf("tool-bash: enableRunInBackground needs the task tools: add %q to tools (line %d)", toolTasks, bgLine)
		}
		off := false
		c.Bash.EnableRunInBackground = &off
	}
	return c, nil
}

func decodeExecutor(dst *string, v *yaml.Node) error {
	v = follow(v)
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		return fmt.Errorf("executor must be a string (line %d)", v.Line)
	}
	if v.Value != executorLocal {
		return fmt.Errorf("unknown executor %q (line %d): the only executor is %q", v.Value, v.Line, executorLocal)
	}
	*dst = v.Value
	return nil
}

func decodeTools(dst *[]string, v *yaml.Node) error {
	v = follow(v)
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return fmt.Errorf("tools must be a list of tool names (line %d)", v.Line)
	}
	out := []string{}
	for _, item := range v.Content {
		item = follow(item)
		if item == nil || item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			return fmt.Errorf("tools must be a list of tool names (line %d)", lineOf(item, v))
		}
		switch name := item.Value; {
		case name != toolBash && name != toolTasks:
			return fmt.Errorf("unknown tool %q in tools (line %d): the tools are %q and %q", name, item.Line, toolBash, toolTasks)
		case slices.Contains(out, name):
			return fmt.Errorf("tool %q listed twice in tools (line %d)", name, item.Line)
		default:
			out = append(out, name)
		}
	}
	*dst = out
	return nil
}

func decodeBash(dst *bashtool.Config, bgLine *int, v *yaml.Node) error {
	const prefix = bashtool.PluginName + ": "
	v = follow(v)
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("%sbash must be a mapping (line %d)", prefix, v.Line)
	}
	return eachKey(v, prefix, func(key string, k, val *yaml.Node) error {
		if key != "enableRunInBackground" {
			return fmt.Errorf("%sunknown key %q (line %d)", prefix, key, k.Line)
		}
		val = follow(val)
		if isNull(val) {
			return nil
		}
		var b bool
		if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!bool" || val.Decode(&b) != nil {
			return fmt.Errorf("%s%s must be a boolean (line %d)", prefix, key, val.Line)
		}
		dst.EnableRunInBackground = &b
		*bgLine = val.Line
		return nil
	})
}

func decodeTasks(dst *tasksSection, v *yaml.Node) error {
	prefix := tasktool.PluginName + ": "
	v = follow(v)
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("%stasks must be a mapping (line %d)", prefix, v.Line)
	}
	return eachKey(v, prefix, func(key string, k, val *yaml.Node) error {
		switch key {
		case "maxRunningPerSession":
			return decodeCount(&dst.MaxRunningPerSession, prefix, key, val)
		case "waitTimeoutMs":
			return decodeMillis(&dst.Tools.WaitTimeoutMs, prefix, key, val)
		case "maxWaitTimeoutMs":
			return decodeMillis(&dst.Tools.MaxWaitTimeoutMs, prefix, key, val)
		}
		return fmt.Errorf("%sunknown key %q (line %d)", prefix, key, k.Line)
	})
}

// decodeCount decodes a positive integer.
func decodeCount(dst *int, prefix, key string, v *yaml.Node) error {
	v = follow(v)
	if isNull(v) {
		return nil
	}
	var n int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&n) != nil || n <= 0 {
		return fmt.Errorf("%s%s must be a positive integer (line %d)", prefix, key, v.Line)
	}
	*dst = n
	return nil
}

// decodeMillis decodes a positive finite number of milliseconds. An explicit
// 0 is refused, as the executor's section refuses it: the default is asked
// for by leaving the key out.
func decodeMillis(dst *float64, prefix, key string, v *yaml.Node) error {
	v = follow(v)
	if isNull(v) {
		return nil
	}
	var f float64
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || v.Decode(&f) != nil {
		return fmt.Errorf("%s%s must be a number (line %d)", prefix, key, v.Line)
	}
	if !(f > 0) || math.IsInf(f, 1) {
		return fmt.Errorf("%s%s must be a positive finite number", prefix, key)
	}
	*dst = f
	return nil
}

// eachKey calls fn for every key of the mapping n after refusing keys that
// are not strings, merge keys and duplicates.
func eachKey(n *yaml.Node, prefix string, fn func(key string, k, v *yaml.Node) error) error {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := follow(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			what := "keys must be strings"
			if k != nil && k.ShortTag() == "!!merge" {
				what = "merge keys (<<) are not supported"
			}
			return fmt.Errorf("%s%s (line %d)", prefix, what, lineOf(n.Content[i], n))
		}
		if seen[k.Value] {
			return fmt.Errorf("%sduplicate key %q (line %d)", prefix, k.Value, k.Line)
		}
		seen[k.Value] = true
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// follow resolves an alias to the node it names.
func follow(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// lineOf is n's line, or the parent's when n has none.
func lineOf(n, parent *yaml.Node) int {
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return parent.Line
}

// oneLine flattens a message onto one line (yaml's multi-error texts have
// several).
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}
