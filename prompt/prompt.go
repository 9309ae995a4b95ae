// Package prompt holds the named sections that make up a system prompt and
// assembles them into one text (docs/spec.md §5, §3.6, §4.2).
//
// Each tool brings its own advice for the model as a [Section] ("tool:bash",
// order 105), and a composition layer adds and removes sections as tools come
// and go. A section's Order places it; sections with the same Order are placed
// by Name, so the assembled text never depends on the order in which the tools
// happened to load.
//
// The contract of a [Registry]:
//   - Names are unique. [Registry.Add] refuses an empty or blank name, text
//     that is empty or only whitespace, and a name already present; the error
//     names the section. A refused section leaves the registry unchanged.
//   - [Registry.Sections] is a snapshot sorted by Order, then Name. Sections
//     are kept as given; trimming happens only when the text is assembled.
//   - [Registry.Text] joins the texts in that order, each trimmed of the blank
//     lines around it (leading blank lines go, the indentation of the first
//     non-blank line stays; all trailing whitespace goes), separated by exactly
//     one blank line. With no sections it is "".
//   - A Registry is safe for concurrent use; Text and Sections see either all
//     or none of a concurrent Add or Remove.
//
// Example:
//
//	r := prompt.NewRegistry()
//	r.Add(prompt.Section{Name: "tool:tasks", Order: 106, Text: "Track task ids."})
//	r.Add(prompt.Section{Name: "tool:bash", Order: 105, Text: "Check [exit code: N]."})
//	r.Text() // "Check [exit code: N].\n\nTrack task ids."
package prompt

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Section is one named piece of the system prompt.
type Section struct {
	Name  string // unique, e.g. "tool:bash"
	Order int    // lower first; ties broken by Name
	Text  string
}

// Registry is a set of sections keyed by name. The zero value is not usable;
// call [NewRegistry]. It is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	sections map[string]Section
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{sections: make(map[string]Section)}
}

// Add adds s. It fails for an empty (or blank) name, for text that is empty
// or only whitespace, and for a name already present; the error text names
// the section. Replacing a section is Remove followed by Add, so that two
// tools that picked the same name find out instead of silently overwriting
// each other.
func (r *Registry) Add(s Section) error {
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("prompt: section name is empty")
	}
	if strings.TrimSpace(s.Text) == "" {
		return fmt.Errorf("prompt: section %q has blank text", s.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.sections[s.Name]; dup {
		return fmt.Errorf("prompt: section %q is already registered", s.Name)
	}
	r.sections[s.Name] = s
	return nil
}

// Remove removes the named section and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sections[name]
	delete(r.sections, name)
	return ok
}

// Sections returns a snapshot of the sections sorted by Order, then Name.
// The slice is the caller's; it is nil when there are no sections.
func (r *Registry) Sections() []Section {
	r.mu.RLock()
	var out []Section
	for _, s := range r.sections {
		out = append(out, s)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Section) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	return out
}

// Text assembles the sections' texts in the order of [Registry.Sections],
// each trimmed of surrounding blank lines, separated by one blank line
// ("\n\n"). It is "" when there are no sections.
func (r *Registry) Text() string {
	sections := r.Sections()
	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = trimBlankLines(s.Text)
	}
	return strings.Join(texts, "\n\n")
}

// trimBlankLines drops the whitespace-only lines before the first non-blank
// line and all whitespace after the last non-blank character. Leading spaces
// of the first non-blank line are kept because they may be meaningful
// (an indented code block).
func trimBlankLines(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	for {
		line, rest, found := strings.Cut(text, "\n")
		if !found || strings.TrimSpace(line) != "" {
			return text
		}
		text = rest
	}
}
