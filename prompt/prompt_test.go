package prompt_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/prompt"
)

func TestSectionsOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  []prompt.Section
		want []string // names, in order
	}{
		{"empty", nil, nil},
		{"one", []prompt.Section{{Name: "a", Order: 1, Text: "x"}}, []string{"a"}},
		{"by order", []prompt.Section{
			{Name: "a", Order: 106, Text: "x"},
			{Name: "b", Order: 105, Text: "x"},
			{Name: "c", Order: -3, Text: "x"},
		}, []string{"c", "b", "a"}},
		{"ties by name", []prompt.Section{
			{Name: "tool:tasks", Order: 100, Text: "x"},
			{Name: "tool:bash", Order: 100, Text: "x"},
			{Name: "base", Order: 100, Text: "x"},
		}, []string{"base", "tool:bash", "tool:tasks"}},
		{"order before name", []prompt.Section{
			{Name: "a", Order: 2, Text: "x"},
			{Name: "z", Order: 1, Text: "x"},
			{Name: "m", Order: 2, Text: "x"},
		}, []string{"z", "a", "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := prompt.NewRegistry()
			for _, s := range tc.add {
				if err := r.Add(s); err != nil {
					t.Fatalf("Add(%+v): %v", s, err)
				}
			}
			var got []string
			for _, s := range r.Sections() {
				got = append(got, s.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Sections() names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSectionsSnapshotKeepsSectionsAsGiven(t *testing.T) {
	r := prompt.NewRegistry()
	in := prompt.Section{Name: "a", Order: 7, Text: "\n  text \n\n"}
	if err := r.Add(in); err != nil {
		t.Fatal(err)
	}
	got := r.Sections()
	if diff := cmp.Diff([]prompt.Section{in}, got); diff != "" {
		t.Errorf("Sections() (-want +got):\n%s", diff)
	}
	got[0].Text = "changed"
	if r.Sections()[0].Text != in.Text {
		t.Error("changing the snapshot changed the registry")
	}
}

func TestAddErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		section prompt.Section
		want    string
	}{
		{"empty name", prompt.Section{Name: "", Text: "x"}, `prompt: section name is empty`},
		{"blank name", prompt.Section{Name: " \t", Text: "x"}, `prompt: section name is empty`},
		{"empty text", prompt.Section{Name: "tool:x", Text: ""}, `prompt: section "tool:x" has blank text`},
		{"blank text", prompt.Section{Name: "tool:x", Text: " \n\t\r\n"}, `prompt: section "tool:x" has blank text`},
		{"duplicate", prompt.Section{Name: "tool:bash", Order: 1, Text: "other"}, `prompt: section "tool:bash" is already registered`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := prompt.NewRegistry()
			existing := prompt.Section{Name: "tool:bash", Order: 105, Text: "bash advice"}
			if err := r.Add(existing); err != nil {
				t.Fatal(err)
			}
			err := r.Add(tc.section)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Add(%+v) = %v, want %q", tc.section, err, tc.want)
			}
			if diff := cmp.Diff([]prompt.Section{existing}, r.Sections()); diff != "" {
				t.Errorf("a refused Add changed the registry (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	r := prompt.NewRegistry()
	for _, s := range []prompt.Section{{Name: "a", Text: "A"}, {Name: "b", Text: "B"}} {
		if err := r.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		remove    string
		wantFound bool
		wantText  string
	}{
		{"missing", false, "A\n\nB"},
		{"a", true, "B"},
		{"a", false, "B"},
		{"b", true, ""},
	} {
		if got := r.Remove(tc.remove); got != tc.wantFound {
			t.Errorf("Remove(%q) = %v, want %v", tc.remove, got, tc.wantFound)
		}
		if got := r.Text(); got != tc.wantText {
			t.Errorf("after Remove(%q): Text() = %q, want %q", tc.remove, got, tc.wantText)
		}
	}
	// A removed name can be added again.
	if err := r.Add(prompt.Section{Name: "a", Text: "A2"}); err != nil {
		t.Fatalf("re-adding a removed section: %v", err)
	}
	if got := r.Text(); got != "A2" {
		t.Errorf("Text() = %q, want %q", got, "A2")
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		texts []string // added with increasing Order
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"only"}, "only"},
		{"two", []string{"first", "second"}, "first\n\nsecond"},
		{"trailing newlines", []string{"first\n", "second\n\n\n"}, "first\n\nsecond"},
		{"leading blank lines", []string{"\n \n\t\nfirst", "\n\nsecond"}, "first\n\nsecond"},
		{"trailing spaces", []string{"first  \n \t", "second\r\n"}, "first\n\nsecond"},
		{"indent of first line kept", []string{"\n    code\nprose"}, "    code\nprose"},
		{"inner blank lines kept", []string{"a\n\n\nb", "c"}, "a\n\n\nb\n\nc"},
		{"multi-line sections", []string{"line 1\nline 2\n", "line 3\nline 4\n"}, "line 1\nline 2\n\nline 3\nline 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := prompt.NewRegistry()
			for i, text := range tc.texts {
				if err := r.Add(prompt.Section{Name: fmt.Sprint("s", i), Order: i, Text: text}); err != nil {
					t.Fatal(err)
				}
			}
			if got := r.Text(); got != tc.want {
				t.Errorf("Text() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestConcurrentUse is for -race: writers add and remove their own sections
// while readers assemble the text. Every reader must see whole sections, in
// order, and the registry must end empty.
func TestConcurrentUse(t *testing.T) {
	r := prompt.NewRegistry()
	if err := r.Add(prompt.Section{Name: "base", Order: 0, Text: "base"}); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			name := fmt.Sprint("tool:", w)
			for range rounds {
				if err := r.Add(prompt.Section{Name: name, Order: w + 1, Text: name + "\n"}); err != nil {
					t.Error(err)
					return
				}
				if !r.Remove(name) {
					t.Errorf("Remove(%q) = false right after adding it", name)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range rounds {
				sections := r.Sections()
				if len(sections) == 0 || sections[0].Name != "base" {
					t.Errorf("Sections() = %+v, want base first", sections)
					return
				}
				for i := 1; i < len(sections); i++ {
					if sections[i-1].Order >= sections[i].Order {
						t.Errorf("Sections() out of order: %+v", sections)
						return
					}
				}
				if text := r.Text(); !strings.HasPrefix(text, "base") {
					t.Errorf("Text() = %q, want it to start with base", text)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := r.Text(); got != "base" {
		t.Errorf("Text() after all writers removed their sections = %q, want %q", got, "base")
	}
}
